#!/usr/bin/env bash
# Regenerates the compatibility matrix, the behaviour table and the cost table: each peer
# through the suite, one run at a time (the machine is shared), then `toolconf matrix` over the
# reports, which writes matrix.md, matrix.html and the README's behaviour block; then the cost
# bench (benchmarks/results/regenerate-costs.sh) and the README's figures.
#   bash benchmarks/results/matrix/regenerate.sh            # every run, then the pages
#   bash benchmarks/results/matrix/regenerate.sh --matrix   # the pages from the committed results
# Peers come from the npm registry into ~/.cache/toolconf (python -m conformance.mcp install).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=benchmarks/results/matrix
fidelity=benchmarks/results/fidelity
run() {  # NAME IMPL [RUN OPTIONS, SCENARIO DIRS...]: one run, its report and its wall time in seconds
  local name=$1 impl=$2 start=$SECONDS
  shift 2
  python -m conformance run --no-progress --impl "$impl" --report "jsonl=$out/$name.jsonl" \
    "$@" || true
  echo "$name $impl $((SECONDS - start))" >> "$out/times.txt"
}
if [ "${1:-}" != "--matrix" ]; then
  : > "$out/times.txt"
  python -m conformance.mcp install filesystem claude-code-2.1.88 claude-code-2.1.332
  run reference direct
  # the reference under each release profile (the README's profiles table)
  : > benchmarks/results/profiles/times.txt
  echo "reference-documented direct $(tail -1 "$out/times.txt" | cut -d' ' -f3)" \
    >> benchmarks/results/profiles/times.txt
  for profile in claude-code-2.1.88 claude-code-latest; do
    start=$SECONDS
    python -m conformance run --no-progress --profile "$profile" \
      --report "jsonl=benchmarks/results/profiles/reference-$profile.jsonl" || true
    echo "reference-$profile direct $((SECONDS - start))" >> benchmarks/results/profiles/times.txt
  done
  run mcp-toolconf mcp:toolconf
  run mcp-filesystem mcp:filesystem
  # claude mcp serve of both releases, the whole suite under the documented profile
  run mcp-claude-code-2.1.88 mcp:claude-code-2.1.88
  run mcp-claude-code-2.1.332 mcp:claude-code-2.1.332
  # every agent CLI through its own pipeline (agent:NAME), two sessions at once; a whole run
  # makes the reruns of earlier code stale
  rm -f "$out"/agent-*.rerun.jsonl
  for agent in gemini-cli qwen-code opencode codex cline kilocode; do
    run "agent-$agent" "agent:$agent" --jobs 2
  done
fi
# One column per report (the reports of one implementation and version are merged into one
# column). Adding a column is adding a report: an agent's whole-suite run saved as
# $out/agent-NAME.jsonl is picked up below at the next regeneration.
reports=("$out"/reference.jsonl "$out"/mcp-toolconf.jsonl "$out"/mcp-toolconf-behaviours-rerun.jsonl
  "$out"/mcp-filesystem.jsonl
  "$out"/mcp-claude-code-2.1.88.jsonl "$out"/mcp-claude-code-2.1.332.jsonl)
# Claude Code through its CLI (agent: definitions): the fidelity runs (benchmarks/results/fidelity/README.md); the
# 2.1.332 column takes the reruns of scenarios its run predates (the -rerun files)
reports+=("$fidelity/claude-code-2.1.88.jsonl" "$fidelity/claude-code-2.1.332.jsonl"
  "$fidelity/claude-code-2.1.332-staleness-rerun.jsonl"
  "$fidelity/claude-code-2.1.332-behaviours-rerun.jsonl")
shopt -s nullglob
# an agent's whole run, then its reruns (agent-NAME.rerun.jsonl: the last result of a scenario wins)
reports+=("$out"/agent-*.jsonl)
# The pages, and the behaviour table the README opens its comparison with
python -m conformance matrix "${reports[@]}" --report "markdown=$out/matrix.md" \
  --report "html=$out/matrix.html" --readme README.md \
  --date "$(head -1 "$out/reference.jsonl" | python -c 'import json,sys; print(json.load(sys.stdin)["started"][:10])')" \
  --regenerate "bash benchmarks/results/matrix/regenerate.sh --matrix"
# What each implementation's model receives from its tools: the cost table and its plot
# (benchmarks/results/costs.*), measured again with the runs, rendered again with --matrix
if [ "${1:-}" = "--matrix" ]; then
  bash benchmarks/results/regenerate-costs.sh --render
else
  bash benchmarks/results/regenerate-costs.sh
fi
# The README's figures, from the committed results
python tests/test_readme_figures.py --write
