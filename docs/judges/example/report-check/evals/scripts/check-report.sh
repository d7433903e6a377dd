#!/usr/bin/env bash
# Script judge: exit 0 = pass, anything else = fail; stdout (and stderr) become the evidence.
# Passes when report.md starts with "# $REPORT_TITLE" (from eval.yaml environment.env), has a
# "Total: N" line, the final message names it, and the agent wrote it with a tool call.
set -u
fail() { echo "FAIL: $*"; exit 1; }

# The working directory is the finished workspace ($EVAL_WORKSPACE).
[ -f report.md ] || fail "report.md does not exist in the workspace"
first=$(head -n 1 report.md)
[ "$first" = "# $REPORT_TITLE" ] || fail "first line is '$first', expected '# $REPORT_TITLE'"
total=$(grep -E '^Total: [0-9]+$' report.md) || fail "report.md has no 'Total: N' line"

# The whole final message, also past the 120,000 bytes EVAL_FINAL_MESSAGE holds.
head -c "$EVAL_FINAL_MESSAGE_BYTES" "$EVAL_FINAL_MESSAGE_FILE" | grep -q 'report\.md' ||
  fail "the final message does not name report.md"

# The normalised transcript (JSON): turns[].toolCalls[].name.
writes=$(node -e '
  const t = require(process.argv[1]);
  console.log(t.turns.flatMap((turn) => turn.toolCalls).filter((c) => c.name === "write_file").length);
' "$EVAL_TRANSCRIPT_PATH")
[ "$writes" -gt 0 ] || fail "the agent never called write_file"

echo "ok: $total; write_file called $writes time(s); case $EVAL_CASE_ID, engine exit code $EVAL_EXIT_CODE"
echo "read $EVAL_WORKSPACE/report.md" >&2
