# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The steps of tests/fresh/fresh.sh, which sources this file after lib.sh
# and sets HERE, MIRROR_HOST, PORT, VERBS_DIR, d (the container's directory)
# and PROXY (the proxy's pid, for its cleanup). Each step prints its own
# result lines; those that later steps cannot do without return 1 when they
# fail or skip, and fresh.sh stops there.

# hn CMD...: this machine's CMD in the container's network namespace (tools
# the fresh system does not have, and must not get for the test: ss, ethtool)
hn() { nsenter -t "$CT_INIT" -n "$@"; }
# hnb CMD...: the same in the container's namespace b (host B)
hnb() { nsenter --net="/proc/$CT_INIT/root/run/netns/b" "$@"; }
# cb CMD...: the container's CMD in its namespace b
cb() { c nsenter --net=/run/netns/b "$@"; }
# indent: output shown under a failure
indent() { sed 's/^/    /'; }

# mirror_up: this machine reaches the Debian mirror (debootstrap, the
# container's apt through the proxy); without it the whole test is skipped
mirror_up() {
	if ! /usr/bin/python3 - "$MIRROR_HOST" <<'EOF' >"$d.mirror" 2>&1; then
import http.client, sys
c = http.client.HTTPConnection(sys.argv[1], 80, timeout=15)
c.request("HEAD", "/debian/dists/bookworm/InRelease")
r = c.getresponse()
print(r.status, r.reason)
sys.exit(r.status != 200)
EOF
		skip "fresh: the Debian mirror $MIRROR_HOST is out of reach: $(tail -n 1 "$d.mirror")"
		rm -f "$d.mirror"
		t_done
	fi
	rm -f "$d.mirror"
}

# fresh_root: ROOT, the cached minimal bookworm (made when missing)
fresh_root() {
	if ! ROOT=$("$HERE/root.sh" make 2>"$d.root"); then
		fail "fresh: debootstrap of a minimal bookworm: $(tail -n 2 "$d.root" | tr '\n' ' ')"
		rm -f "$d.root"
		t_done
	fi
	rm -f "$d.root"
	pass "fresh: a minimal bookworm (debootstrap --variant=minbase, systemd): $ROOT"
}

# build_debs: make deb, as service.sh
build_debs() {
	DEBS=$XHCA_TOP/build/debs
	if ! make -C "$XHCA_TOP" --no-print-directory -s deb >"$d.make" 2>&1; then
		fail "fresh: make deb: $(tail -n 3 "$d.make" | tr '\n' ' ')"
		rm -f "$d.make"
		t_done
	fi
	rm -f "$d.make"
}

# boot_fresh: the root under an overlay in memory, booted; then the proxy on
# its loopback and apt told to use it
boot_fresh() {
	if ! ct_root "$d" "$ROOT" || ! ct_boot "$d" --bind-ro="$DEBS:/debs"; then
		fail "fresh: the container did not boot: $(tail -n 5 "$d/console" | tr '\n' ' ')"
		t_done
	fi
	pass "fresh: it booted with systemd as PID 1 ($(c systemctl is-system-running))"
	# the point of the test: none of what the package needs is there yet
	local have
	# (adduser is: dbus needs it)
	have=$(c dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' libbpf1 libxdp1 libelf1 \
		iproute2 libibverbs1 2>/dev/null | awk '$1 == "ii" {print $2}' | tr '\n' ' ')
	check_eq "fresh: none of libbpf1 libxdp1 libelf1 iproute2 libibverbs1 installed" "$have" ""
	/usr/bin/python3 "$HERE/mirror_proxy.py" "/proc/$CT_INIT/ns/net" "$PORT" "$d/proxy.log" \
		"$MIRROR_HOST" >"$d/proxy.out" 2>&1 &
	PROXY=$!
	for _ in $(seq 100); do grep -q listening "$d/proxy.out" && break; sleep 0.1; done
	if ! grep -q listening "$d/proxy.out"; then
		fail "fresh: the mirror's proxy did not start: $(tail -n 2 "$d/proxy.out" | tr '\n' ' ')"
		t_done
	fi
	echo "Acquire::http::Proxy \"http://127.0.0.1:$PORT\";" \
		>"$d/root/etc/apt/apt.conf.d/00xhca-fresh-proxy"
}

# fetched: the .deb files the container's apt fetched through the proxy so
# far, by package name, a line each, sorted
fetched() {
	awk '$1 == 200 && $3 == "GET" && $4 ~ /\.deb$/ {print $4}' "$d/proxy.log" 2>/dev/null |
		sed 's|.*/||; s|_.*||' | LC_ALL=C sort -u
}

# install_xhca: apt-get update, then `apt install ./xhca_*.deb` as README
# says (with recommends: apt's default)
install_xhca() {
	local out rc
	out=$(c env DEBIAN_FRONTEND=noninteractive apt-get update 2>&1)
	rc=$?
	check "fresh: apt-get update through the proxy: exit $rc" test $rc = 0 ||
		{ echo "$out" | tail -n 5 | indent; return 1; }
	out=$(c sh -c 'cd /debs && DEBIAN_FRONTEND=noninteractive apt install -y ./xhca_*.deb' 2>&1)
	rc=$?
	check_eq "fresh: apt install ./xhca_*.deb: exit $rc, the package installed" \
		"$(c dpkg-query -W -f '${Status}' xhca 2>/dev/null)" "install ok installed" ||
		{ echo "$out" | tail -n 15 | indent; return 1; }
	FETCHED=$(fetched)
	echo "  # from the mirror: $(tr '\n' ' ' <<<"$FETCHED")"
	check "fresh: its dependencies came with it (libbpf1 libxdp1 iproute2 adduser)" \
		cq dpkg-query -W libbpf1 libxdp1 iproute2 adduser
	# (the rdma_cm library finds the verbs library beside it: the loader's
	# path as xhca exec sets it)
	check_eq "fresh: ldd: nothing of xhcad, xhca or the verbs libraries is missing" \
		"$(c env LD_LIBRARY_PATH="$VERBS_DIR" sh -c "ldd /usr/sbin/xhcad /usr/bin/xhca \
		$VERBS_DIR/*.so.1" 2>&1 | grep -E 'not found|No such')" ""
	check "fresh: it made the group xhca" cq getent group xhca
	check_eq "fresh: and /run/xhca (tmpfiles.d)" "$(c stat -c '%a %U' /run/xhca)" "755 root"
	# (--man=no: a minimal system has no man to look Documentation= up with)
	out=$(c systemd-analyze verify --man=no xhcad@v0.service 2>&1)
	check_eq "fresh: systemd-analyze verify --man=no xhcad@v0.service" "$out" ""
	# libxhca1 and libxhca-dev: they install beside it, nothing else needed
	out=$(c sh -c 'cd /debs && DEBIAN_FRONTEND=noninteractive apt-get install -y \
		./libxhca1_*.deb ./libxhca-dev_*.deb' 2>&1)
	rc=$?
	check "fresh: apt-get install ./libxhca1_*.deb ./libxhca-dev_*.deb: exit $rc" test $rc = 0 ||
		echo "$out" | tail -n 8 | indent
	return 0
}

# install_verbs_utils: Debian's ibverbs-utils (ibv_rc_pingpong), which the
# package suggests
install_verbs_utils() {
	local out rc
	out=$(c env DEBIAN_FRONTEND=noninteractive apt-get install -y ibverbs-utils 2>&1)
	rc=$?
	check "fresh: apt-get install ibverbs-utils: exit $rc, ibv_rc_pingpong there" \
		cq test -x /usr/bin/ibv_rc_pingpong || { echo "$out" | tail -n 8 | indent; return 1; }
	echo "  # from the mirror: $(LC_ALL=C comm -13 <(echo "$FETCHED") <(fetched) | tr '\n' ' ')"
}

# two_ends: v0 in the container's network namespace, v1 in its namespace b,
# a veth pair; each end's xhcad a unit: xhcad@v1 with a drop-in that puts it
# in namespace b (NetworkNamespacePath=)
two_ends() {
	c ip netns add b
	c ip link add v0 numrxqueues 2 numtxqueues 2 type veth peer name v1 numrxqueues 2 \
		numtxqueues 2 netns b
	c ip addr add 10.79.0.1/24 dev v0
	cb ip addr add 10.79.0.2/24 dev v1
	c ip link set v0 address 02:79:00:00:00:01 up
	cb ip link set v1 address 02:79:00:00:00:02 up
	cb ip link set lo up
	# veth offloads as lib.sh's topo_ends sets them (this machine's ethtool:
	# the fresh system has none, and xhca does not need it)
	hn ethtool -K v0 tx off rxvlan off txvlan off gro on >/dev/null 2>&1
	hnb ethtool -K v1 tx off rxvlan off txvlan off gro on >/dev/null 2>&1
	# small host memories: two xhcads in a container
	for i in v0 v1; do echo "hostmem-mb = 64" >"$d/root/etc/xhca/$i.conf"; done
	ct_unit_no_device
	mkdir -p "$d/root/etc/systemd/system/xhcad@v1.service.d"
	printf '[Service]\nNetworkNamespacePath=/run/netns/b\n' \
		>"$d/root/etc/systemd/system/xhcad@v1.service.d/netns.conf"
	c systemctl daemon-reload
}

# active UNIT IF [c|cb]: the unit is active and xhca -i IF status answers
active() {
	for _ in $(seq 100); do
		c systemctl -q is-active "$1" && "${3:-c}" xhca -i "$2" status >/dev/null 2>&1 &&
			return 0
		sleep 0.1
	done
	return 1
}

# units_up: systemctl enable --now xhcad@v0 (as README says), start xhcad@v1
units_up() {
	local ok=0
	c systemctl enable --now xhcad@v0 >/dev/null 2>&1
	c systemctl start xhcad@v1
	if active xhcad@v0 v0 c; then
		pass "fresh: systemctl enable --now xhcad@v0: active, its socket answers"
	else
		fail "fresh: systemctl enable --now xhcad@v0: not active, or its socket does not answer"
		c journalctl -u xhcad@v0 --no-pager | tail -n 10 | indent
		ok=1
	fi
	if active xhcad@v1 v1 cb; then
		pass "fresh: systemctl start xhcad@v1 (in namespace b): active, its socket answers"
	else
		fail "fresh: systemctl start xhcad@v1: not active, or its socket does not answer"
		c journalctl -u xhcad@v1 --no-pager | tail -n 10 | indent
		ok=1
	fi
	check_eq "fresh: the sockets are the group xhca's" \
		"$(c stat -c '%a %U %G' /run/xhca/v0.sock /run/xhca/v1.sock | tr '\n' ' ')" \
		"660 root xhca 660 root xhca "
	check_eq "fresh: xhca_rx attached to both ends" \
		"$(c ip -o link show v0 | grep -c ' xdp') $(cb ip -o link show v1 | grep -c ' xdp')" \
		"1 1"
	return $ok
}

# pingpong_alice: ibv_rc_pingpong through xhca exec, alice (in the group
# xhca) at both ends: the server on xhcad@v0, the client on xhcad@v1
pingpong_alice() {
	local srv rc rs
	c useradd -m -G xhca alice
	c runuser -u alice -- timeout 30 xhca -i v0 exec -- ibv_rc_pingpong -g 1 -c -n 200 \
		-s 4096 >"$d/srv" 2>&1 &
	srv=$!
	for _ in $(seq 100); do
		hn ss -Hltn 'sport = :18515' | grep -q LISTEN && break
		sleep 0.05
	done
	cb runuser -u alice -- timeout 30 xhca -i v1 exec -- ibv_rc_pingpong -g 1 -c -n 200 \
		-s 4096 10.79.0.1 >"$d/cli" 2>&1
	rc=$?
	wait "$srv"
	rs=$?
	# both ends print their bytes and iterations: 4096 bytes each way, 200 times
	check "fresh: alice's ibv_rc_pingpong via xhca exec, xhcad@v0 to xhcad@v1: exit $rs and \
$rc ($(grep -h ' iters in ' "$d/cli"))" test "$rs $rc $(cat "$d/srv" "$d/cli" |
		grep -cE '^(1638400 bytes|200 iters) in ')" = "0 0 4" ||
		tail -n 3 "$d/srv" "$d/cli" | indent
	check_eq "fresh: xhca exec took the packaged verbs library" \
		"$(c runuser -u alice -- xhca -i v0 exec -- sh -c 'echo $LD_LIBRARY_PATH')" "$VERBS_DIR"
}

# bob_refused: bob, outside the group, is told why he may not
bob_refused() {
	local out rc
	c useradd -m bob
	out=$(c runuser -u bob -- xhca -i v0 exec -- ibv_rc_pingpong -g 1 -c 2>&1)
	rc=$?
	check "fresh: bob, outside the group: xhca exec refuses (exit $rc), saying why" \
		test $rc != 0 -a "$(grep -c 'no permission to use xhca_v0' <<<"$out")" -ge 1 ||
		echo "$out" | tail -n 3 | indent
}

# remove_xhca: apt-get remove xhca stops both units, no xhcad left, and
# takes xhca_rx off both interfaces (the units' --keep left it at the stop:
# the prerm's xhcad --unload, xhcad@v1's in its namespace b)
remove_xhca() {
	local out rc ids
	ids="$(c ip -d link show v0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p') $(cb ip -d \
		link show v1 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')"
	out=$(c env DEBIAN_FRONTEND=noninteractive apt-get remove -y xhca 2>&1)
	rc=$?
	check_eq "fresh: apt-get remove xhca: exit $rc, both units stopped, no xhcad running" \
		"$rc $(c systemctl is-active xhcad@v0 xhcad@v1 | tr '\n' ' ')$(c sh -c \
		'cat /proc/[0-9]*/comm 2>/dev/null' | grep -cx xhcad)" "0 inactive inactive 0" ||
		echo "$out" | tail -n 8 | indent
	check "fresh: ... and /usr/sbin/xhcad is gone" cq test ! -e /usr/sbin/xhcad
	check_eq "fresh: ... xhca_rx ($ids) taken off v0 and v1: no xdp in ip link show" \
		"$(c ip -o link show v0 | grep -c ' xdp') $(cb ip -o link show v1 |
		grep -c ' xdp')" "0 0" || echo "$out" | grep xhcad | indent
	check_eq "fresh: ... no pins left under /sys/fs/bpf/xhca, no restart record in /run/xhca" \
		"$(c find /sys/fs/bpf/xhca /run/xhca -mindepth 1 \( -type d -o -name '*.state' \
		-o -name 'xhca_*' \) 2>/dev/null | wc -l)" 0
	check_eq "fresh: ... the removal said what it did, for each" \
		"$(grep -cE '^xhcad: v[01]: detached xhca_rx \(id [0-9]+, native mode\); '\
'removed 20 pins' <<<"$out")" 2 || echo "$out" | tail -n 8 | indent
}
