# ---- what follows is the same in every copy; only the settings above change ----
#
# Usage: bash watchdog.sh [run|start|stop]
#   run    watch in the foreground (the default; what `start` and the boot hooks run)
#   start  start a detached copy (setsid + nohup) unless one already runs, print its pid
#   stop   end the running copy
# Every decision goes to $state_dir/log (trimmed to its newest half past $log_max_bytes); the
# latest sample is in $state_dir/state, the settings in $state_dir/settings.
#
# A signal that cannot be read counts as busy: the watchdog would rather leave an instance on
# than power off one that is working.

set -u
export TZ=UTC
LC_ALL=C
# Where the counters are read. A real instance leaves these alone; the tests point them at
# files they control.
proc=${LEASEHOLD_WATCHDOG_PROC:-/proc}
cgroup=${LEASEHOLD_WATCHDOG_CGROUP:-/sys/fs/cgroup}

log_file=$state_dir/log
pid_file=$state_dir/pid
me=leasehold-watchdog

is_uint() { case ${1:-x} in *[!0-9]*) return 1 ;; *) return 0 ;; esac; }

# True when $1 is the pid of a running watchdog (named by `exec -a` below).
is_watchdog() {
  local first=
  is_uint "${1:-}" || return 1
  kill -0 "$1" 2>/dev/null || return 1
  IFS= read -r -d '' first 2>/dev/null < "/proc/$1/cmdline"
  [ "$first" = "$me" ]
}

running_pid() {
  local pid=
  [ -r "$pid_file" ] && IFS= read -r pid < "$pid_file"
  if is_watchdog "$pid"; then printf '%s\n' "$pid"; return 0; fi
  return 1
}

case ${1:-run} in
  start)
    mkdir -p "$state_dir" || exit 1
    if pid=$(running_pid); then printf '%s\n' "$pid"; exit 0; fi
    command -v setsid >/dev/null 2>&1 || { echo "$me: setsid is missing" >&2; exit 18; }
    setsid nohup bash "$0" run </dev/null >/dev/null 2>&1 &
    for _ in $(seq 1 100); do
      if pid=$(running_pid); then printf '%s\n' "$pid"; exit 0; fi
      sleep 0.05
    done
    echo "$me: it did not start (see $log_file)" >&2
    exit 19
    ;;
  stop)
    if pid=$(running_pid); then
      kill -TERM "$pid" 2>/dev/null
      for _ in $(seq 1 100); do is_watchdog "$pid" || exit 0; sleep 0.05; done
      kill -KILL "$pid" 2>/dev/null
    fi
    exit 0
    ;;
  run) ;;
  *) echo "usage: bash $0 [run|start|stop]" >&2; exit 2 ;;
esac

# Name the process so `start`, `stop` and status can tell it from any other bash.
if [ "${LEASEHOLD_WATCHDOG_NAMED:-}" != 1 ] && [ -r "$0" ]; then
  LEASEHOLD_WATCHDOG_NAMED=1 exec -a "$me" bash "$0" run
fi

mkdir -p "$state_dir" || exit 1
umask 077

log_bytes=0
[ -f "$log_file" ] && log_bytes=$(wc -c < "$log_file")
is_uint "$log_bytes" || log_bytes=0

# One line per decision: time, what, details. Past the bound, keep the newest half.
log() {
  local stamp line
  printf -v stamp '%(%Y-%m-%dT%H:%M:%SZ)T' -1
  line="$stamp $*"
  printf '%s\n' "$line" >> "$log_file"
  log_bytes=$((log_bytes + ${#line} + 1))
  if [ "$log_bytes" -gt "$log_max_bytes" ]; then
    # Cut at a line start: the first, partial line of the kept half goes too.
    tail -c $((log_max_bytes / 2)) "$log_file" | tail -n +2 > "$log_file.tmp" && mv -f "$log_file.tmp" "$log_file"
    recount_log
  fi
}
recount_log() {
  log_bytes=$(wc -c < "$log_file")
  is_uint "$log_bytes" || log_bytes=0
}

# Exactly one copy per state folder: the pid file is created only if absent (noclobber).
claim() {
  local old
  if (set -C; printf '%s\n' "$$" > "$pid_file") 2>/dev/null; then return 0; fi
  IFS= read -r old 2>/dev/null < "$pid_file"
  if [ "$old" != "$$" ] && is_watchdog "$old"; then return 1; fi
  rm -f "$pid_file"
  (set -C; printf '%s\n' "$$" > "$pid_file") 2>/dev/null
}
if ! claim; then
  log not_started "another copy already runs (pid $(cat "$pid_file" 2>/dev/null))"
  exit 0
fi

sleeper=
finish() {
  [ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
  log stopped "$1"
  rm -f "$pid_file"
  exit 0
}
trap 'finish "ended by request"' TERM INT HUP

{
  printf 'idle_s=%s\ninterval_s=%s\ngrace_s=%s\nttl_s=%s\ngpu_below=%s\n' \
    "$idle_s" "$interval_s" "$grace_s" "$ttl_s" "$gpu_below"
  printf 'signals=%s\npower_off=%s\npre_stop=%s\n' "$signals" "$power_off" "$pre_stop"
} > "$state_dir/settings.tmp" && mv -f "$state_dir/settings.tmp" "$state_dir/settings"

clk_tck=$(getconf CLK_TCK 2>/dev/null)
is_uint "$clk_tck" && [ "$clk_tck" -gt 0 ] || clk_tck=100

# Centiseconds since boot (monotonic), for the length of each sample window.
uptime_cs() {
  local up rest
  if read -r up rest < /proc/uptime 2>/dev/null; then
    up=${up/./}
    is_uint "$up" && { now_cs=$((10#$up)); return; }
  fi
  now_cs=$((SECONDS * 100))
}

# ---- the signals: each sets its counter (or value) or returns 1 when it cannot be read ----

read_gpu() {   # the busiest GPU's utilisation, in percent
  local out line max=-1
  out=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>/dev/null) || return 1
  while IFS= read -r line; do
    line=${line//[[:space:]]/}
    [ -n "$line" ] || continue
    is_uint "$line" || return 1
    line=$((10#$line))
    [ "$line" -gt "$max" ] && max=$line
  done <<< "$out"
  [ "$max" -ge 0 ] || return 1
  gpu_now=$max
}

read_cpu() {   # CPU time used, in microseconds: cgroup v2, cgroup v1, else the whole machine
  local key val f user nice system idle iowait irq softirq steal rest
  if [ -r "$cgroup/cpu.stat" ]; then
    while read -r key val rest; do
      [ "$key" = usage_usec ] && is_uint "$val" && { cpu_now=$val; return 0; }
    done < "$cgroup/cpu.stat"
  fi
  for f in "$cgroup/cpuacct/cpuacct.usage" "$cgroup/cpu,cpuacct/cpuacct.usage" "$cgroup/cpuacct.usage"; do
    if [ -r "$f" ] && read -r val < "$f" && is_uint "$val"; then cpu_now=$((val / 1000)); return 0; fi
  done
  if [ -r "$proc/stat" ] && read -r key user nice system idle iowait irq softirq steal rest < "$proc/stat"; then
    [ "$key" = cpu ] || return 1
    for val in "$user" "$nice" "$system" "$irq" "$softirq" "$steal"; do is_uint "$val" || return 1; done
    cpu_now=$(((user + nice + system + irq + softirq + steal) * 1000000 / clk_tck))
    return 0
  fi
  return 1
}

read_io() {   # bytes read and written: cgroup v2 io.stat, cgroup v1 blkio, else /proc/diskstats
  local total=0 dev rest kv v op f name
  if [ -r "$cgroup/io.stat" ]; then
    while read -r dev rest; do
      for kv in $rest; do
        case $kv in rbytes=*|wbytes=*) v=${kv#*=}; is_uint "$v" && total=$((total + v)) ;; esac
      done
    done < "$cgroup/io.stat"
    io_now=$total
    return 0
  fi
  for f in "$cgroup/blkio/blkio.throttle.io_service_bytes" "$cgroup/blkio.throttle.io_service_bytes"; do
    if [ -r "$f" ]; then
      while read -r dev op v rest; do
        case $op in Read|Write) is_uint "$v" && total=$((total + v)) ;; esac
      done < "$f"
      io_now=$total
      return 0
    fi
  done
  [ -r "$proc/diskstats" ] || return 1
  while read -r _ _ name _ _ f _ _ _ v rest; do
    case $name in loop*|ram*|zram*) continue ;; esac
    is_uint "$f" && is_uint "$v" && total=$((total + (f + v) * 512))
  done < "$proc/diskstats"
  io_now=$total
}

read_net() {   # bytes received and sent on every interface but loopback
  local total=0 line name rx tx
  [ -r "$proc/net/dev" ] || return 1
  while IFS= read -r line; do
    case $line in *:*) ;; *) continue ;; esac
    name=${line%%:*}
    name=${name//[[:space:]]/}
    [ "$name" = lo ] && continue
    set -- ${line#*:}
    rx=${1:-x} tx=${9:-x}
    is_uint "$rx" && is_uint "$tx" || return 1
    total=$((total + rx + tx))
  done < "$proc/net/dev"
  net_now=$total
}

read_ssh() {   # interactive SSH logins: sshd's per-session process is titled "sshd: USER@pts/N"
  local f first n=0
  [ -d "$proc" ] || return 1
  for f in "$proc"/[0-9]*/cmdline; do
    first=
    IFS= read -r -d '' first 2>/dev/null < "$f"
    case $first in
      "sshd: "*@pts/*|"sshd-session: "*@pts/*) n=$((n + 1)) ;;
    esac
  done
  ssh_now=$n
}

enabled() { case " $signals " in *" $1 "*) return 0 ;; esac; return 1; }

# Take one sample; sets `busy` (the busy or unreadable signals) and `detail` (every value).
declare -A last=()
sample() {
  local name now rate dt
  busy= detail=
  uptime_cs
  dt=$((now_cs - ${last[t]:-now_cs}))
  [ "$dt" -gt 0 ] || dt=0
  if enabled gpu; then
    if read_gpu; then
      detail+=" gpu=${gpu_now}%"
      [ "$gpu_now" -ge "$gpu_below" ] && busy+=" gpu"
    else
      detail+=" gpu=unreadable"; busy+=" gpu"
    fi
  fi
  # Counters turn into rates over the time since the previous sample; the first has no rate.
  for name in cpu io net; do
    enabled "$name" || continue
    if "read_$name"; then
      now=${name}_now
      now=${!now}
      if [ -z "${last[$name]:-}" ] || [ "$dt" -eq 0 ] || [ "$now" -lt "${last[$name]}" ]; then
        detail+=" $name=first"; busy+=" $name"
      else
        case $name in
          cpu) rate=$(((now - last[cpu]) / (dt * 100))); detail+=" cpu=${rate}%"   # of one core
               [ "$rate" -ge "$cpu_below" ] && busy+=" cpu" ;;
          io)  rate=$(((now - last[io]) * 100 / dt / 1024)); detail+=" io=${rate}KiB/s"
               [ "$rate" -ge "$io_below_kib" ] && busy+=" io" ;;
          net) rate=$(((now - last[net]) * 100 / dt / 1024)); detail+=" net=${rate}KiB/s"
               [ "$rate" -ge "$net_below_kib" ] && busy+=" net" ;;
        esac
      fi
      last[$name]=$now
    else
      unset "last[$name]"
      detail+=" $name=unreadable"; busy+=" $name"
    fi
  done
  if enabled ssh; then
    if read_ssh; then
      detail+=" ssh=$ssh_now"
      [ "$ssh_now" -gt 0 ] && busy+=" ssh"
    else
      detail+=" ssh=unreadable"; busy+=" ssh"
    fi
  fi
  last[t]=$now_cs
  busy=${busy# }
  detail=${detail# }
}

write_state() {
  printf 'phase=%s\nrunning_s=%s\nidle_s=%s\nbusy=%s\nsample=%s\nupdated=%(%Y-%m-%dT%H:%M:%SZ)T\n' \
    "$1" "$elapsed" "$idle_for" "${busy// /,}" "$detail" -1 > "$state_dir/state.tmp" \
    && mv -f "$state_dir/state.tmp" "$state_dir/state"
}

pre_stop_done=0
power_off_now() {
  local rc
  write_state powering_off
  if [ -n "$pre_stop" ] && [ "$pre_stop_done" = 0 ]; then
    pre_stop_done=1
    log pre_stop "running: $pre_stop"
    if command -v timeout >/dev/null 2>&1; then
      timeout "$pre_stop_timeout_s" bash -c "$pre_stop" >> "$log_file" 2>&1 </dev/null
    else
      bash -c "$pre_stop" >> "$log_file" 2>&1 </dev/null
    fi
    rc=$?
    recount_log
    log pre_stop_done "exit $rc (powering off either way)"
  fi
  log power_off "$1; running: $power_off"
  bash -c "$power_off" >> "$log_file" 2>&1 </dev/null
  rc=$?
  recount_log
  if [ "$rc" -eq 0 ]; then
    log powered_off "the power-off command succeeded"
    write_state powered_off
    rm -f "$pid_file"
    exit 0
  fi
  log power_off_failed "exit $rc; trying again at the next sample"
}

started=$SECONDS
grace_end=$((started + grace_s))
idle_since=-1 prev_t=-1 idle_for=0 elapsed=0 busy= detail=
log start "pid $$; idle ${idle_s}s, every ${interval_s}s, grace ${grace_s}s, ttl ${ttl_s}s (0 = none), gpu below ${gpu_below}%, signals ${signals// /,}"

while :; do
  # Its folder deleted by hand (or with its test host): nothing left to log to or be stopped by.
  [ -d "$state_dir" ] || exit 0
  t=$SECONDS
  elapsed=$((t - started))
  sample
  if [ "$ttl_s" -gt 0 ] && [ "$elapsed" -ge "$ttl_s" ]; then
    log ttl "ran ${elapsed}s of at most ${ttl_s}s; powering off busy or not ($detail)"
    power_off_now "ttl reached"
  elif [ "$t" -lt "$grace_end" ]; then
    idle_since=-1 idle_for=0
    log grace "$((grace_end - t))s of grace left ($detail)"
    write_state grace
  elif [ -n "$busy" ]; then
    idle_since=-1 idle_for=0
    log busy "${busy// /,} ($detail)"
    write_state watching
  else
    # This sample covers the window since the previous one, so idleness began at its start.
    if [ "$idle_since" -lt 0 ]; then
      idle_since=$prev_t
      [ "$idle_since" -ge "$grace_end" ] || idle_since=$grace_end
      [ "$idle_since" -ge 0 ] && [ "$idle_since" -le "$t" ] || idle_since=$t
    fi
    idle_for=$((t - idle_since))
    if [ "$idle_for" -ge "$idle_s" ]; then
      log idle "${idle_for}s of ${idle_s}s; time to power off ($detail)"
      power_off_now "idle for ${idle_for}s"
    else
      log idle "${idle_for}s of ${idle_s}s ($detail)"
      write_state idle
    fi
  fi
  prev_t=$t
  sleep "$interval_s" &
  sleeper=$!
  wait "$sleeper"
  sleeper=
done
