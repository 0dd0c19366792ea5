// The run report's filter box (conformance/analysis/run_page.py): every scenario whose text
// holds the typed words stays shown, the others are hidden, and groups left empty are
// hidden too; while filtering, the groups that still hold a scenario are opened.
(function () {
  'use strict';
  const input = document.getElementById('filter');
  const shown = document.getElementById('shown');
  const scenarios = Array.from(document.querySelectorAll('.scenario'));
  const containers = Array.from(document.querySelectorAll('.section, details.group, .outcome-group'));
  const wasOpen = new Map();

  function apply() {
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    let count = 0;
    scenarios.forEach(function (node) {
      const text = node.dataset.text || '';
      const match = words.every(function (word) { return text.includes(word); });
      node.classList.toggle('hidden', !match);
      count += match;
    });
    containers.forEach(function (node) {
      const any = node.querySelector('.scenario:not(.hidden)') !== null;
      node.classList.toggle('hidden', !any);
      if (node.tagName === 'DETAILS') {
        if (!wasOpen.has(node)) { wasOpen.set(node, node.open); }
        node.open = words.length ? any : wasOpen.get(node);
      }
    });
    if (!words.length) { wasOpen.clear(); }
    shown.textContent = words.length ? count + ' of ' + scenarios.length + ' scenarios match' : '';
  }

  input.addEventListener('input', apply);
})();
