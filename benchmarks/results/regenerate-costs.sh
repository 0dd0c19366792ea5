#!/usr/bin/env bash
# Regenerates benchmarks/results/costs.{json,md,png}: what each implementation's model receives
# from its tools (toolconf bench --costs). Each implementation is measured alone, one after the
# other (the machine is shared), into a JSON report of its own; the reports are then merged into
# the table and the plot. The trace replays files of one pinned commit (TREE), so a run made
# later, or while the code changes, replays the same calls and merges with the others.
#   bash benchmarks/results/regenerate-costs.sh              # every implementation, then render
#   bash benchmarks/results/regenerate-costs.sh LABEL...     # these again (labels below), then render
#   bash benchmarks/results/regenerate-costs.sh --render     # the table and plot from costs.json
# Agents come from the npm registry into ~/.cache/toolconf (python -m conformance.peers.agent install).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=benchmarks/results
TREE=b6dd249b7a3c7ae19dc020da930f71cfb41e6017
declare -A impls=(
  [reference]="stdio:python -m reference.adapter"
  [claude-code-2.1.88]=agent:claude-code-2.1.88
  [claude-code-2.1.332]=agent:claude-code-2.1.332
  [qwen-code]=agent:qwen-code
  [gemini-cli]=agent:gemini-cli
  [opencode]=agent:opencode
  [kilocode]=agent:kilocode
  [codex]=agent:codex
  [cline]=agent:cline
)
order=(reference claude-code-2.1.88 claude-code-2.1.332 qwen-code gemini-cli opencode kilocode codex cline)
render() {  # REPORT...: merged (a later label replaces an earlier) into the three outputs
  local from=()
  for report in "$@"; do from+=(--from "$report"); done
  python -m conformance bench --costs "${from[@]}" \
    --regenerate "bash benchmarks/results/regenerate-costs.sh" \
    --report "json=$out/costs.json" --report "markdown=$out/costs.md" \
    --report "png=$out/costs.png" > /dev/null
}
if [ "${1:-}" = "--render" ]; then
  render "$out/costs.json"
  exit 0
fi
chosen=("$@")
[ ${#chosen[@]} -gt 0 ] || chosen=("${order[@]}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/tree"
git archive "$TREE" reference conformance | tar -x -C "$work/tree"
reports=()
[ $# -gt 0 ] && [ -f "$out/costs.json" ] && reports+=("$out/costs.json")
for label in "${chosen[@]}"; do
  spec=${impls[$label]:?"unknown label $label; one of: ${order[*]}"}
  python -m conformance bench --costs --no-reference --impl "$label=$spec" --tree "$work/tree" \
    --report "json=$work/$label.json" --report "markdown=$work/$label.md" > /dev/null || true
  reports+=("$work/$label.json")
done
render "${reports[@]}"
