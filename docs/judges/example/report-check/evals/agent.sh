#!/usr/bin/env bash
# A stand-in agent (a custom engine): writes report.md from data.csv and answers a SessionResult.
# Asked for a "draft", it leaves the Total line out, so the script judge fails that case.
set -eu
input=$1
total=$(awk -F, 'NR > 1 { s += $2 } END { print s }' data.csv)
{
  echo "# Report"
  tail -n +2 data.csv | sed 's/^/- /'
  grep -q draft "$input" || echo "Total: $total"
} > report.md
cat <<JSON
{"exit_code": 0, "final_message": "I wrote \`report.md\` from data.csv.", "tool_calls": [{"name": "write_file", "input": {"path": "report.md"}, "output": "ok"}]}
JSON
