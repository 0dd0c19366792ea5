// The matrix page's drill-down (conformance/analysis/matrix_html.py): a click, Enter or
// Space on a cell opens its scenarios in a row right under the cell's row, failures first;
// the same cell, the close button or Escape closes it. Everything is built as text nodes.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('matrix-data').textContent);
  const VERDICT = { pass: 'held', fail: 'did not hold', unobserved: 'not observed' };
  let open = null;

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(function ([key, value]) {
      if (key === 'text') { node.textContent = value; } else { node.setAttribute(key, value); }
    });
    (children || []).forEach(function (child) { if (child) { node.appendChild(child); } });
    return node;
  }

  function close() {
    if (!open) { return; }
    open.row.remove();
    open.cell.classList.remove('open');
    open.cell.setAttribute('aria-expanded', 'false');
    open = null;
  }

  function specList(ids, badges) {
    const span = el('span', { class: 'ids' });
    ids.forEach(function (id) {
      const kind = data.provenance[id] || '';
      const item = el('span', { class: 'id' }, [
        el('code', { class: kind, title: kind || 'no evidence entry', text: id })]);
      if (badges && kind) { item.appendChild(el('span', { class: 'prov ' + kind, text: kind })); }
      span.appendChild(item);
      span.appendChild(document.createTextNode(' '));
    });
    return span;
  }

  function scenarioTable(column, order) {
    const results = data.results[column];
    const colgroup = el('colgroup', {}, [
      el('col', { class: 'c-id' }), el('col', { class: 'c-v' }), el('col', { class: 'c-v' }),
      el('col', { class: 'c-v' }), el('col', { class: 'c-v' }), el('col', { class: 'c-spec' }),
      el('col', { class: 'c-msg' })]);
    const head = el('tr', {}, ['scenario', 'behaviour', 'outcome', 'identity', 'rendering',
      'SPEC IDs', 'message'].map(function (name) { return el('th', { text: name }); }));
    const body = el('tbody');
    order.forEach(function (index) {
      const scenario = data.scenarios[index];
      const result = results[index];
      const verdict = result ? result[2] : 'not run';
      const cells = [
        el('td', {}, [el('code', { text: scenario[0] }), el('span', { class: 't', text: scenario[1] })]),
        el('td', { text: VERDICT[verdict] || verdict }),
        el('td', { text: result ? result[1] : 'not run' }),
        el('td', { text: result ? (VERDICT[result[3]] || result[3]) : '' }),
        el('td', { text: result ? (VERDICT[result[4]] || result[4]) : '' }),
        el('td', {}, [specList(scenario[2], false)]),
        el('td', { text: result ? result[5] : 'the report has no result for it (an older suite)' }),
      ];
      body.appendChild(el('tr', { class: 'v-' + verdict.replace(' ', '') }, cells));
    });
    return el('table', { class: 'scen' }, [colgroup, el('thead', {}, [head]), body]);
  }

  function panelFor(cell) {
    const column = Number(cell.dataset.c);
    const row = Number(cell.dataset.r);
    const label = data.columns[column].label;
    const parts = [];
    let order;
    if (cell.dataset.t === 'b') {
      const behaviour = data.behaviours[row];
      const state = behaviour.cells[column].state;
      order = behaviour.cells[column].order;
      parts.push(el('div', { class: 'panel-head' }, [
        el('strong', { text: behaviour.title }),
        el('span', { text: label }),
        el('span', { class: 'badge', text: state + ' ' + cell.querySelector('.fig').textContent }),
        el('button', { class: 'close', type: 'button', title: 'close (Esc)', text: '×' })]));
      parts.push(el('div', { class: 'hint' }, [
        el('span', { text: behaviour.question + ' Rests on: ' }), specList(behaviour.spec, true)]));
    } else {
      const section = data.sections[row];
      order = section.cells[column];
      parts.push(el('div', { class: 'panel-head' }, [
        el('strong', { text: section.name }),
        el('span', { text: label }),
        el('span', { class: 'badge', text: cell.getAttribute('title') }),
        el('button', { class: 'close', type: 'button', title: 'close (Esc)', text: '×' })]));
    }
    parts.push(el('div', { class: 'hint', text:
      order.length + ' scenarios, those that did not hold first. Behaviour decides the cell; ' +
      'identity and rendering are shown, never counted in it.' }));
    parts.push(scenarioTable(column, order));
    return el('div', { class: 'panel' }, parts);
  }

  // Show as much of the opened panel as fits in the frame, never scrolling the clicked row
  // out from under the sticky header: the user keeps looking at the same place.
  function reveal(wrap, tr, detail) {
    const frame = wrap.getBoundingClientRect();
    if (frame.top < 0 || frame.bottom > window.innerHeight) {
      window.scrollBy(0, frame.top);
    }
    // the header cells are sticky, not the thead: their box is where the header shows
    const head = wrap.querySelector('thead th').getBoundingClientRect().bottom;
    const bottom = Math.min(wrap.getBoundingClientRect().bottom, window.innerHeight);
    const top = tr.getBoundingClientRect().top;
    const below = detail.getBoundingClientRect().bottom - bottom;
    if (top < head) {
      wrap.scrollTop -= head - top;
    } else if (below > 0) {
      wrap.scrollTop += Math.min(below, top - head);
    }
  }

  function toggle(cell) {
    const same = open && open.cell === cell;
    close();
    if (same) { return; }
    const tr = cell.closest('tr');
    const wrap = cell.closest('.wrap');
    const width = tr.children.length;
    const panel = panelFor(cell);
    panel.style.setProperty('--panel-width', (wrap.clientWidth - 2) + 'px');
    const detail = el('tr', { class: 'detail' }, [el('td', { colspan: String(width) }, [panel])]);
    tr.after(detail);
    cell.classList.add('open');
    cell.setAttribute('aria-expanded', 'true');
    open = { cell: cell, row: detail };
    panel.querySelector('.close').addEventListener('click', function () { close(); cell.focus(); });
    reveal(wrap, tr, detail);
  }

  document.querySelectorAll('td.cell').forEach(function (cell) {
    cell.addEventListener('click', function () { toggle(cell); });
    cell.addEventListener('keydown', function (event) {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); toggle(cell); }
    });
  });
  document.addEventListener('keydown', function (event) {
    if (event.key === 'Escape' && open) { const cell = open.cell; close(); cell.focus(); }
  });
})();
