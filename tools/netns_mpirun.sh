#!/usr/bin/env bash
# Run an Open MPI job across two "hosts" on this one machine: two network namespaces joined by a veth
# pair, one rank (slot) in each, the ranks talking TCP over the veth only. This exercises ridge's
# multi-host path (a real network stack between the ranks, no shared memory) without a second machine.
#
#   sudo tools/netns_mpirun.sh mpirun -np 2 [mpirun options...] PROGRAM [ARGS...]
#   e.g. tools/netns_mpirun.sh mpirun -np 2 --bind-to none build/ridge probe --dist --json --no-save
#        tools/netns_mpirun.sh mpirun -np 2 --bind-to none build/ridge run -m MODEL -p "Hi" --tp 2 -t 1
#
# What it does, then undoes on exit whatever happens (success, failure, INT/TERM/HUP; not SIGKILL):
#   - creates namespaces ridge-a-SUFFIX and ridge-b-SUFFIX (SUFFIX random), loopback up in each, and a
#     veth pair (ends named like the namespaces) moved into them, with SUBNET.1/24 in A and SUBNET.2/24
#     in B: the addresses exist only inside the namespaces, the host's network is left alone;
#   - writes a hostfile naming the two addresses (SLOTS slots each) and runs the given mpirun inside A,
#     in a UTS namespace of its own whose host name is A's name; the rank in A is mpirun's local one,
#     the one in B is started through tools/netns_rsh.sh (Open MPI's rsh launcher, in place of ssh),
#     which maps the address to namespace B and gives it B's host name. Distinct host names matter:
#     `ridge probe --dist` tells hosts apart by them (gethostname), as across real machines;
#   - inserts after the mpirun word: --hostfile, --mca plm_rsh_agent tools/netns_rsh.sh,
#     --mca plm_rsh_no_tree_spawn 1, --mca btl tcp,self and --mca btl_tcp_if_include /
#     oob_tcp_if_include SUBNET.0/24 (no shared-memory transport, TCP on the veth only), and
#     --bind-to none unless the command binds (each namespace would bind its rank to the same core);
#   - kills what is left running in the namespaces (by their pids), deletes them (which removes the
#     veth pair) and the hostfile's folder ($TMPDIR/ridge-netns-SUFFIX.*), after printing to stderr
#     "netns_mpirun.sh: veth ... sent N bytes, received M bytes" (what crossed the veth, seen from A).
# The exit status is mpirun's (2 for a setup failure, 128+N when ended by signal N).
#
# Needs root (namespaces, links), iproute2 (`ip netns`), util-linux (unshare) and Open MPI's mpirun.
# Exports OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (it runs as root by necessity).
# Environment: RIDGE_NETNS_SUFFIX (1-7 of [a-z0-9], default random; lets a caller find the names),
#              RIDGE_NETNS_SUBNET (first three octets, default 10.77.0), RIDGE_NETNS_SLOTS (default 1).
set -euo pipefail

die() { echo "netns_mpirun.sh: $*" >&2; exit 2; }

[ $# -ge 1 ] || die "usage: netns_mpirun.sh mpirun -np 2 [mpirun options...] PROGRAM [ARGS...]"
[ "$(id -u)" -eq 0 ] || die "must run as root: it creates network namespaces and a veth pair (try sudo)"
command -v ip >/dev/null 2>&1 || die "'ip' not found: install iproute2 (tools/setup_test_deps.sh does)"
ip netns list >/dev/null 2>&1 || die "'ip netns' is unavailable (iproute2 without netns support?)"
command -v unshare >/dev/null 2>&1 || die "'unshare' not found: install util-linux"
case "$(basename "$1")" in
  mpirun|mpiexec|orterun) ;;
  *) die "the command must start with mpirun (Open MPI), got '$1'" ;;
esac
MPIRUN=$(command -v "$1") || die "'$1' not found: tools/setup_deps.sh installs openmpi-bin"
shift
"$MPIRUN" --version 2>/dev/null | grep -q "Open MPI" || die "$MPIRUN is not Open MPI's: its rsh launcher is needed"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AGENT=$HERE/netns_rsh.sh
[ -x "$AGENT" ] || die "$AGENT is missing or not executable (chmod +x it)"

SUFFIX=${RIDGE_NETNS_SUFFIX:-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n' | cut -c1-7)}
[[ $SUFFIX =~ ^[a-z0-9]{1,7}$ ]] || die "RIDGE_NETNS_SUFFIX must be 1-7 of [a-z0-9] (interface names are at most 15 characters)"
SUBNET=${RIDGE_NETNS_SUBNET:-10.77.0}
[[ $SUBNET =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || die "RIDGE_NETNS_SUBNET must be three octets, e.g. 10.77.0"
SLOTS=${RIDGE_NETNS_SLOTS:-1}
[[ $SLOTS =~ ^[1-9][0-9]*$ ]] || die "RIDGE_NETNS_SLOTS must be a positive integer"
NS_A=ridge-a-$SUFFIX
NS_B=ridge-b-$SUFFIX
ADDR_A=$SUBNET.1
ADDR_B=$SUBNET.2

child=""
tmpdir=""
made_ns=()
veth_here=""
veth_up=""
# shellcheck disable=SC2317,SC2086  # run by the EXIT trap; $pids is a list of pids, split on purpose
cleanup() {
  local rc=$? ns pids
  trap - EXIT INT TERM HUP
  set +e
  if [ -n "$child" ]; then
    kill -TERM "$child" 2>/dev/null
    wait "$child" 2>/dev/null
  fi
  if [ -n "$veth_up" ]; then  # what crossed the veth: the ranks' (and Open MPI's own) TCP traffic
    local stats=/sys/class/net/$NS_A/statistics
    echo "netns_mpirun.sh: veth $NS_A ($ADDR_A) <-> $NS_B ($ADDR_B): $NS_A sent" \
      "$(ip netns exec "$NS_A" cat "$stats/tx_bytes" 2>/dev/null || echo '?') bytes, received" \
      "$(ip netns exec "$NS_A" cat "$stats/rx_bytes" 2>/dev/null || echo '?') bytes" >&2
  fi
  for ns in "${made_ns[@]}"; do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    if [ -n "$pids" ]; then
      kill -TERM $pids 2>/dev/null
      for _ in 1 2 3 4 5 6 7 8 9 10; do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -z "$pids" ] && break
        sleep 0.2
      done
      [ -n "$pids" ] && kill -KILL $pids 2>/dev/null && sleep 0.2
    fi
    ip netns del "$ns" 2>/dev/null || echo "netns_mpirun.sh: warning: could not delete namespace $ns" >&2
  done
  # Our veth pair, if setup failed before its end A went into namespace A: it is still in this one.
  [ -n "$veth_here" ] && ip link del "$NS_A" 2>/dev/null
  [ -n "$tmpdir" ] && rm -rf "$tmpdir"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

step() { "$@" || die "setup failed: $*"; }
existing=$(ip netns list)
for ns in "$NS_A" "$NS_B"; do
  grep -q "^$ns\( \|$\)" <<<"$existing" && die "namespace $ns already exists (another run with RIDGE_NETNS_SUFFIX=$SUFFIX?)"
  ip netns add "$ns" || die "cannot create network namespace $ns (no netns support in this kernel or container?)"
  made_ns+=("$ns")
  step ip -n "$ns" link set lo up
done
step ip link add "$NS_A" type veth peer name "$NS_B"
veth_here=1
step ip link set "$NS_A" netns "$NS_A"
veth_here=""  # from here on, deleting namespace A deletes the pair
step ip link set "$NS_B" netns "$NS_B"
step ip -n "$NS_A" addr add "$ADDR_A/24" dev "$NS_A"
step ip -n "$NS_B" addr add "$ADDR_B/24" dev "$NS_B"
step ip -n "$NS_A" link set "$NS_A" up
step ip -n "$NS_B" link set "$NS_B" up
veth_up=1

tmpdir=$(mktemp -d -t "ridge-netns-$SUFFIX.XXXXXX")
printf '%s slots=%s\n%s slots=%s\n' "$ADDR_A" "$SLOTS" "$ADDR_B" "$SLOTS" >"$tmpdir/hostfile"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Each "host" sees all of this machine's cores and would bind its rank to core 0, the same core for
# both: unbound unless the command says otherwise.
bind=(--bind-to none)
for arg in "$@"; do [[ "$arg" == --bind-to ]] && bind=(); done
export RIDGE_NETNS_MAP="$ADDR_A=$NS_A $ADDR_B=$NS_B"
# In the background, waited for, so that a signal reaches the traps at once; stdin passed on.
# shellcheck disable=SC2016  # $0 and $@ are the inner shell's
ip netns exec "$NS_A" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$NS_A" \
  "$MPIRUN" --hostfile "$tmpdir/hostfile" \
  --mca plm_rsh_agent "$AGENT" --mca plm_rsh_no_tree_spawn 1 \
  --mca btl tcp,self --mca btl_tcp_if_include "$SUBNET.0/24" --mca oob_tcp_if_include "$SUBNET.0/24" \
  "${bind[@]}" "$@" 0<&0 &
child=$!
set +e
wait "$child"
rc=$?
child=""
exit "$rc"
