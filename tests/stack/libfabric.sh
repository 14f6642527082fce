#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# libfabric on xhca (issue "The RDMA software stack runs on xhca"): Debian's
# unmodified libfabric-bin through `xhca exec`. fi_info's verbs provider
# lists xhca's device for FI_EP_MSG (rdma_cm connections) and, through
# ofi_rxm, FI_EP_RDM; fi_pingpong -e msg and -e rdm, every byte checked
# (-c), between two xhca hosts and between two processes on one host.
. "$(dirname "$0")/../lib.sh"
need_root "libfabric"
need_cmds libfabric fi_info fi_pingpong
MID_MTU=4200 two_hosts libfabric 512
links_up

# info PROV EP: fi_info's entries of provider PROV for domain xhca_IF_A, EP type
info() { xa fi_info -p "$1" -t "$2" 2>&1; }
out=$(info verbs FI_EP_MSG)
check "fi_info -p verbs -t FI_EP_MSG: domain xhca_$IF_A, rdma_cm connections" \
	bash -c 'grep -q "domain: xhca_$1\$" <<<"$2" && grep -q "protocol: FI_PROTO_RDMA_CM_IB_RC" <<<"$2"' _ "$IF_A" "$out"
out=$(info "verbs;ofi_rxm" FI_EP_RDM)
check "fi_info -p 'verbs;ofi_rxm' -t FI_EP_RDM: domain xhca_$IF_A" \
	bash -c 'grep -q "provider: verbs;ofi_rxm" <<<"$2" && grep -q "domain: xhca_$1\$" <<<"$2" && grep -q "type: FI_EP_RDM" <<<"$2"' _ "$IF_A" "$out"
out=$(info verbs FI_EP_DGRAM)
check "fi_info -p verbs -t FI_EP_DGRAM: domain xhca_$IF_A-dgram" grep -q "domain: xhca_$IF_A-dgram" <<<"$out"


# pp NAME ARGS: fi_pingpong ARGS, server on A, client on B (or on A: ONE=1),
# every byte checked; both exit 0, the client's last size line is there
pp() {
	local name=$1 spid rs rc run=xb
	shift
	[ -n "${ONE:-}" ] && run=xa
	xa timeout 90 fi_pingpong -c "$@" >"$tmp/f.srv" 2>&1 &
	spid=$!
	wait_listen "$NS_A" 47592
	$run timeout 90 fi_pingpong -c "$@" "$IP_A" >"$tmp/f.cli" 2>&1
	rc=$?
	wait "$spid"
	rs=$?
	if [ "$rc" != 0 ] || [ "$rs" != 0 ]; then
		fail "$name: server exit $rs, client exit $rc"
		tail -n 5 "$tmp/f.srv" "$tmp/f.cli" | sed 's/^/    /'
		return 1
	fi
	check "$name: $(tail -n 1 "$tmp/f.cli" | tr -s ' ')" \
		awk '$1 == "1m" || $1 == "64k" { f = 1 } END { exit !f }' "$tmp/f.cli"
}
sent() { xhca status -j | json_get 'd["tx_frames"]'; }
pa=$(sent)
pp "fi_pingpong -e msg, two hosts" -p verbs -e msg -I 100
pp "fi_pingpong -e rdm (verbs;ofi_rxm), two hosts" -p "verbs;ofi_rxm" -e rdm -I 100
check "libfabric: through xhca (frames A sent: $pa -> $(sent))" test "$(sent)" -gt $((pa + 10000))
l0=$(xhca status -j | json_get 'd["loopback"]["self"]')
ONE=1 pp "fi_pingpong -e msg, one host" -p verbs -e msg -I 100 -S 65536
ONE=1 pp "fi_pingpong -e rdm (verbs;ofi_rxm), one host" -p "verbs;ofi_rxm" -e rdm -I 100 -S 65536
check "libfabric on one host: through xhca's loopback ($(( $(xhca status -j | json_get 'd["loopback"]["self"]') - l0 )) frames)" \
	test "$(xhca status -j | json_get 'd["loopback"]["self"]')" -gt $((l0 + 1000))
t_done
