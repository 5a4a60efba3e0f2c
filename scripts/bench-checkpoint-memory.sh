#!/usr/bin/env bash
# Peak memory while a checkpoint writes a ~2 GiB database (issue 7, docs/benchmarks/notes.md).
#
#   scripts/bench-checkpoint-memory.sh                    # 2 GiB, about 2 minutes
#   CHUNKS=2 CKPT_MB=200 scripts/bench-checkpoint-memory.sh  # 128 MiB trial
#
# Loads ck.t with CHUNKS x 32,768 rows (BIGINT key, 2,048-byte VARCHAR; 32 chunks =
# 2 GiB of values, the most): one INSERT ... SELECT per chunk, from a 1,024-row seed
# table joined with itself (not from ck.t: see docs/benchmarks/notes.md on INSERT ... SELECT from
# the table itself). The server runs with log compression off and
# --checkpoint-log-size CKPT_MB, above the load's log, so no checkpoint fires during
# the load. Then it records VmRSS and the Go heap (pprof, also after a forced GC),
# resets VmHWM (echo 5 > /proc/PID/clear_refs), starts sampling memory every 0.5 s
# ($OUT/mem.tsv), and rewrites a 1 MiB value in a one-row table until the log passes
# the threshold and the checkpoint fires. Summary: $OUT/summary.txt.
# Heap columns: live_est = NextGC / 2 (GOGC=100), the heap live at the last GC.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/bench-ckpt-mem}; PORT=${PORT:-3431}; PPROF=${PPROF:-127.0.0.1:6071}
CHUNKS=${CHUNKS:-32}; CKPT_MB=${CKPT_MB:-2300}
. scripts/bench-lib.sh
rm -rf "$OUT"; mkdir -p "$OUT"; build_lsm
LOCKSTEP_PPROF=$PPROF start_lsm "$OUT/server.log" --datadir "$OUT/data" \
  --checkpoint-log-size "${CKPT_MB}M" --log-compression=OFF
wait_ready 60
exec > >(tee "$OUT/summary.txt") 2>&1
echo "$(date -u '+%F %T') UTC, $(uptime)"

V=$(printf 'SHA2(n+%d,512),' $(seq 0 15)); V="CONCAT(${V%,})" # 16 x 128 hex = 2,048 bytes
q "CREATE DATABASE ck; CREATE TABLE ck.seed (id INT PRIMARY KEY, v VARCHAR(2048) NOT NULL);
   CREATE TABLE ck.t (id BIGINT PRIMARY KEY, v VARCHAR(2048) NOT NULL);
   CREATE TABLE ck.pad (id INT PRIMARY KEY, v MEDIUMTEXT); INSERT INTO ck.pad VALUES (1, '');
   INSERT INTO ck.seed WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM s WHERE n < 1024) SELECT n, $V FROM s"
t0=$(now)
for ((c = 0; c < CHUNKS; c++)); do
  q "INSERT INTO ck.t SELECT a.id*1024 + b.id, b.v FROM ck.seed a JOIN ck.seed b WHERE a.id > $((c * 32)) AND a.id <= $((c * 32 + 32))"
done
echo "load: $(q 'SELECT COUNT(*), SUM(LENGTH(v)) FROM ck.t' | awk '{printf "%d rows, %.0f MiB of values", $1, $2/1048576}') in $(awk -v a="$t0" -v b="$(now)" 'BEGIN {printf "%.0f", b-a}') s; log $(mb "$(st Lockstep_log_bytes)") MiB, threshold $CKPT_MB MiB"
[ "$(st Lockstep_checkpoints)" = 0 ] || { echo "a checkpoint fired during the load: raise CKPT_MB"; exit 1; }

sleep 5
read -r ha hi hs ng gc < <(heap "$PPROF")
echo "before: VmRSS $(($(kb $LS_PID VmRSS) / 1024)) MiB, VmHWM $(($(kb $LS_PID VmHWM) / 1024)) MiB; heap alloc $(mb $ha) inuse $(mb $hi) sys $(mb $hs) MiB, live at last GC ~$(mb $((ng / 2))) MiB"
read -r ha hi hs ng gc < <(heap "$PPROF" gc)
echo "after a forced GC: VmRSS $(($(kb $LS_PID VmRSS) / 1024)) MiB; heap alloc (= live) $(mb $ha) MiB, inuse $(mb $hi), sys $(mb $hs) MiB"
echo 5 > "/proc/$LS_PID/clear_refs"
echo "VmHWM reset to $(($(kb $LS_PID VmHWM) / 1024)) MiB"

(echo -e "t\trss_mib\thwm_mib\theap_alloc_mib\tlive_est_mib\tnum_gc\tcheckpoints"
 while kill -0 "$LS_PID" 2>/dev/null; do
   read -r ha hi hs ng gc < <(heap "$PPROF")
   echo -e "$(now)\t$(($(kb $LS_PID VmRSS) / 1024))\t$(($(kb $LS_PID VmHWM) / 1024))\t$(mb $ha)\t$(mb $((ng / 2)))\t$gc\t$(st Lockstep_checkpoints)"
   sleep 0.5
 done) > "$OUT/mem.tsv" &
SAMPLER_PID=$!

U="UPDATE ck.pad SET v = REPEAT(SHA2(RAND(), 512), 8192) WHERE id = 1" # 1 MiB
while [ "$(st Lockstep_log_bytes)" -lt $((CKPT_MB * 1048576)) ]; do q "$U; $U; $U; $U"; done
tx=$(now)
until [ "$(st Lockstep_checkpoints)" -ge 1 ]; do sleep 0.1; done
td=$(now)
sleep 2; kill "$SAMPLER_PID"; SAMPLER_PID=
ms=$(st Lockstep_checkpoint_last_ms)
echo "checkpoint: $ms ms (Lockstep_checkpoint_last_ms), $(st Lockstep_checkpoint_last_rows) rows, seen done $(awk -v a="$tx" -v b="$td" 'BEGIN {printf "%.1f", b-a}') s after the log passed the threshold"
ls -l "$OUT/data/checkpoint/"; echo "log after: $(du -sm "$OUT/data/log" | cut -f1) MiB"
echo "peak: VmHWM since the reset $(($(kb $LS_PID VmHWM) / 1024)) MiB"
awk -F'\t' -v a="$td" -v ms="$ms" 'NR > 1 && $1 >= a - ms/1000 - 0.6 && $1 <= a + 0.6 {
    if (!n++) {h0 = $4; g0 = $6}; h1 = $4; g1 = $6; if ($2 > r) r = $2; if ($5 > l) l = $5 }
  END {printf "during the checkpoint (%d samples, 0.5 s apart): max VmRSS %d MiB; heap alloc %d -> %d MiB (+%d) with %d GCs; max live_est %d MiB\n", n, r, h0, h1, h1 - h0, g1 - g0, l}' "$OUT/mem.tsv"
