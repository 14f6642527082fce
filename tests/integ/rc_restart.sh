#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Send queues across an xhcad restart (--keep) on one of two xhca hosts:
# an application (xhca-rctest) keeps its RC QP; after the restart every
# operation goes on both ways (the requester's PSN came back from the QP
# context, the ring and attributes from the state file; until the session
# resumes, xhcad looks at its ring every millisecond). A request in flight
# across the restart (the link cut meanwhile) completes flushed and the QP
# goes to the error state: nothing can tell whether the remote executed it.
. "$(dirname "$0")/../lib.sh"
need_root "rc_restart"
XHCAD_LOG=tmp # A's log: its restart says why a QP went to the error state
two_hosts rc_restart 64 --keep
restart_a() {
	xhcad_stop TERM
	check_eq "rc_restart: xhcad --keep exits 0 ($1)" "$XHCAD_RC" 0
	xhcad_start --keep --hostmem-mb 64 || fail "rc_restart: xhcad on $IF_A again ($1)"
}

rct_start "$tmp" restart
rct_pause 1 || fail "rc_restart: the first pause"
# The application's QP from the CLI: its send queue's settings changed,
# shown, and kept across the restart (the state file).
sqj() { "$B/xhca" -i "$IF_A" -j qp show | json_get "$1"; }
AQP=$(sqj '[q["qpn"] for q in d["qps"] if "send_queue" in q][0]')
"$B/xhca" -i "$IF_A" qp modify "$AQP" --timeout 16 --retry-cnt 5 --rnr-retry 3 \
	--max-rd-atomic 4 >/dev/null
sq_now() { sqj '[(s["timeout"], s["retry_cnt"], s["rnr_retry"], s["max_rd_atomic"], s["depth"]) for s in [q["send_queue"] for q in d["qps"] if q["qpn"] == '"$AQP"']][0]'; }
check_eq "rc_restart: qp modify --timeout/--retry-cnt/--rnr-retry/--max-rd-atomic on the application's QP" \
	"$(sq_now)" "(16, 5, 3, 4, 1024)"
check "rc_restart: qp show -v has the send queue's columns" \
	bash -c "'$B/xhca' -i '$IF_A' -v qp show | head -1 | grep -q 'SQ_PSN.*RD_ATOMIC'"
restart_a "idle send queue"
check_eq "rc_restart: the send queue's settings came back after the restart" "$(sq_now)" \
	"(16, 5, 3, 4, 1024)"
rct_go
rct_pause 2 || fail "rc_restart: the second pause"
impair_start --drop 100 || fail "rc_restart: cut the link"
rct_go
rct_pause 3 || fail "rc_restart: the third pause"
restart_a "a request in flight"
impair_stop
rct_go
rct_end rc_restart 41
check "rc_restart: the restarted xhcad said why the QP went to the error state" \
	grep -q "in flight when xhcad stopped" "${XHCAD_LOG:-/dev/null}"
t_done
