# shellcheck shell=bash
# 'lead DIR NAME' for tests/lab/zklab and tests/lab/zkpods (sourced by both): NAME leads, made so
# rather than hoped for. An election among servers at one zxid (an idle lab) elects the highest id
# whose vote it needs, so only NAME and a bare majority of lower ids keep running while it is
# elected, and the stopped ones start again and follow it. Checked: NAME leads when it returns,
# or it fails saying who does. A case then asks for the leader it needs instead of restarting the
# leader until the election happens to choose well.
#
# The sourcing script defines: lab_members DIR (the ensemble's servers, one a line), lab_server_id
# DIR NAME (its myid), and pid_of, cmd_start, cmd_stop, cmd_leader, cmd_wait DIR [--timeout S] as usual.

cmd_lead() {
  local dir=$1 name=$2 attempt leader
  for attempt in 1 2 3; do
    leader=$(cmd_leader "$dir") || leader=""
    [[ $leader == "$name" ]] && return 0
    elect "$dir" "$name" "$leader" || return 1
  done
  leader=$(cmd_leader "$dir") || leader="none"
  [[ $leader == "$name" ]] ||
    { echo "lead: $name does not lead after three elections (the leader: $leader)" >&2; return 1; }
}

# One election that NAME must win: NAME and just enough servers with lower ids for a bare majority
# keep running, every other member (the leader among them) is stopped, so that the election needs
# every vote left, NAME's is the best of them (the highest id at one zxid), and a late vote from a
# higher id cannot tip it (on a loaded machine one did: e62b2a7's successor's fresh clone). Then the
# stopped ones start again and follow NAME. Pods outside the members (add-pod) are not counted:
# stop them first.
elect() {
  local dir=$1 name=$2 leader=$3 id other
  local -a members keep=() stopped=()
  mapfile -t members < <(lab_members "$dir")
  local majority=$((${#members[@]} / 2 + 1))
  id=$(lab_server_id "$dir" "$name")
  pid_of "$dir" "$name" >/dev/null || cmd_start "$dir" "$name"
  keep=("$name")
  while read -r other; do  # the lowest ids first
    ((${#keep[@]} < majority)) || break
    [[ $other == "$name" || $other == "$leader" ]] && continue
    pid_of "$dir" "$other" >/dev/null || continue
    (($(lab_server_id "$dir" "$other") < id)) && keep+=("$other")
  done < <(for other in "${members[@]}"; do echo "$(lab_server_id "$dir" "$other") $other"; done | sort -n | cut -d' ' -f2)
  ((${#keep[@]} == majority)) || {
    echo "lead: $name needs $((majority - 1)) running servers with lower ids than its $id beside it" >&2
    return 1
  }
  for other in "${members[@]}"; do
    [[ " ${keep[*]} " == *" $other "* ]] && continue
    pid_of "$dir" "$other" >/dev/null || continue
    stopped+=("$other")
    cmd_stop "$dir" "$other"
  done
  local i
  for ((i = 0; i < 150; i++)); do [[ $(cmd_leader "$dir") == "$name" ]] && break; sleep 0.2; done
  for other in "${stopped[@]}"; do cmd_start "$dir" "$other"; done
  cmd_wait "$dir" --timeout 90
}
