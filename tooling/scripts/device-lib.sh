# Sourced by the device-*.sh scripts (after they set $out and $root): `step` runs one command of a GPU-machine
# run under a timeout, appends its output to $out/<log> and a one-line result (rc, seconds, the vitest or
# sanitizer summary) to $out/summary.txt.
step() { # log name, timeout seconds, dir, command...
  local log=$1 t=$2 dir=$3; shift 3
  local t0=$SECONDS
  echo "===== $dir: $*" >> "$out/$log"
  (cd "$root/$dir" && timeout "$t" "$@") >> "$out/$log" 2>&1
  local rc=$?
  local tail
  tail=$(sed 's/\x1b\[[0-9;]*m//g' "$out/$log" | grep -aE 'Tests +[0-9]|ERROR SUMMARY|RACECHECK SUMMARY' | tail -1 | tr -s ' ')
  echo "$dir [$*]: rc=$rc in $((SECONDS - t0)) s; $tail" | tee -a "$out/summary.txt"
}
