#!/bin/sh
# Open MPI's remote-shell agent for tools/netns_mpirun.sh: stands in for ssh so that mpirun can start
# its daemon (orted) on a "host" that is a network namespace on this machine.
#
#   --mca plm_rsh_agent tools/netns_rsh.sh   (mpirun then calls: netns_rsh.sh [options] HOST COMMAND...)
#
# HOST is one of the addresses netns_mpirun.sh put in the hostfile; RIDGE_NETNS_MAP (inherited from
# mpirun's environment, set by netns_mpirun.sh) maps it to its namespace: "ADDR=NS ADDR=NS". COMMAND is
# run as ssh would run it, by a shell (`sh -c "COMMAND..."`, so Open MPI's quoting keeps its meaning),
# inside that namespace and in a UTS namespace of its own whose host name is the namespace's name:
# each namespace is one host to the ranks too (gethostname differs, as it would across machines).
set -eu
# ssh-style options before the host (Open MPI passes none to an agent not named ssh; skip any anyway).
while [ $# -gt 0 ]; do
  case "$1" in
    -l|-p|-i|-o|-F) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "netns_rsh.sh: usage: netns_rsh.sh HOST COMMAND..." >&2; exit 2; }
host=$1
shift
ns=""
for pair in ${RIDGE_NETNS_MAP:-}; do
  [ "${pair%%=*}" = "$host" ] && ns=${pair#*=}
done
[ -n "$ns" ] || { echo "netns_rsh.sh: host '$host' is not in RIDGE_NETNS_MAP ('${RIDGE_NETNS_MAP:-}'): start mpirun through tools/netns_mpirun.sh" >&2; exit 255; }
# "$*": the command's words joined by spaces, re-read by the shell, as ssh does with its arguments.
exec ip netns exec "$ns" unshare --uts sh -c "hostname '$ns' && $*"
