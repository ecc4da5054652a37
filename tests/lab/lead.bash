# shellcheck shell=bash
# 'lead DIR NAME' for tests/lab/zklab and tests/lab/zkpods (sourced by both): NAME leads, made so
# rather than hoped for. An election among servers at one zxid (an idle lab) elects the highest id
# that votes, so the servers with higher ids than NAME and the leader are stopped, NAME is elected
# by the rest, and the stopped ones start again and follow it. Checked: NAME leads when it returns,
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

# One election that NAME should win: the servers that outrank it stopped, then started again.
elect() {
  local dir=$1 name=$2 leader=$3 id other running=0 i
  local -a stopped=()
  id=$(lab_server_id "$dir" "$name")
  while read -r other; do
    pid_of "$dir" "$other" >/dev/null || continue
    running=$((running + 1))
    [[ $other == "$name" ]] && continue
    if [[ $other == "$leader" ]] || (($(lab_server_id "$dir" "$other") > id)); then stopped+=("$other"); fi
  done < <(lab_members "$dir")
  local members; members=$(lab_members "$dir" | wc -l)
  ((running - ${#stopped[@]} > members / 2)) || {
    echo "lead: electing $name needs ${stopped[*]} stopped, which leaves no quorum of $members" >&2
    return 1
  }
  for other in "${stopped[@]}"; do cmd_stop "$dir" "$other"; done
  for ((i = 0; i < 150; i++)); do [[ $(cmd_leader "$dir") == "$name" ]] && break; sleep 0.2; done
  for other in "${stopped[@]}"; do cmd_start "$dir" "$other"; done
  cmd_wait "$dir" --timeout 90
}
