# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xhca: software RoCEv2 host channel adapter (XDP + AF_XDP).
#   make            build everything (only builds: make deps installs packages)
#   make test       layers and man pages checked, unit, integration and interop
#                   tests (T="control unit/rx": only those; SANITIZE=1: sanitized
#                   programs; make test-sanitize: unit and integration so)
#   make unit       only build/test_unit, built and run: no packages, no layers
#                   checked (T="rx/seq_* resp/acks": those cases, test_unit -t)
#   make demo       two xhca hosts (an application each, clean and impaired), then one
#                   host's receive pipeline up close
#   make test-rxe   the RXE interop harness (an RXE guest in qemu, ~7 minutes: not
#                   part of make test; .ci/run runs it)
#   make interop    the same cases, in detail
#   make test-kernels xhca on Debian 12's kernels, 6.1 and 6.12 (qemu guests with
#                   this host's root) against this host's xhca: not part of make test
#   make test-fresh the packages on a fresh Debian 12 (debootstrap, a container;
#                   downloads from the Debian mirror: not part of make test)
#   make fuzz       FUZZ_N (3 million) mutated frames through xhca_rx, FUZZ_SEED;
#                   then rings scribbled over for a minute (sanitized xhcad)
#   make bench      ns/packet and packets/s against baselines
#   make deps       apt-get install only what is missing
#   make vmlinux    regenerate vmlinux/vmlinux.h from the running kernel
#   make install    PREFIX=/usr/local DESTDIR= (LIBDIR, UNITDIR, TMPFILESDIR)
#   make deb        Debian packages (debian/) into build/debs

PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
UNITDIR ?= $(PREFIX)/lib/systemd/system
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
# The release is the first line of debian/changelog.
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

CLANG ?= clang
CC ?= gcc
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

OUT := $(if $(filter 1,$(SANITIZE)),build/sanitize,build)
# Every output under $(OUT): objects, their dependency files (-MMD: a header
# change rebuilds the files that include it), the BPF objects, skeletons and
# programs.
BPF_OBJS := $(patsubst bpf/%.c,$(OUT)/bpf/%.o,$(wildcard bpf/*.bpf.c))
SKELS := $(patsubst $(OUT)/bpf/%.bpf.o,$(OUT)/%.skel.h,$(BPF_OBJS))

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-fno-stack-protector -Ivmlinux -Iinclude -Iinclude/priv -MMD -MP
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter -Iinclude -Iinclude/priv -I$(OUT) -Iuser/lib \
	-MMD -MP
# libnl-route: the neighbour lookup (user/lib/neigh.c), in libxhca.a
NL_CFLAGS := $(shell pkg-config --cflags libnl-route-3.0 2>/dev/null || echo -I/usr/include/libnl3)
NL_LIBS := $(shell pkg-config --libs libnl-route-3.0 2>/dev/null || echo -lnl-route-3 -lnl-3)
LDLIBS := -lxdp -lbpf -lelf -lz $(NL_LIBS) -lpthread -ldl
# SANITIZE=1 (make test SANITIZE=1, make test-sanitize): every userspace
# program of the project with AddressSanitizer (leak detection on) and
# UndefinedBehaviorSanitizer, built under build/sanitize; tests/run.sh fails
# on any report. Not the verbs library: Debian's programs load it, and a
# sanitized library needs the sanitizer's runtime first in a program.
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ifeq ($(SANITIZE),1)
CFLAGS += $(SAN_FLAGS)
endif
# x86-64: a copy or a fill whose size the compiler knows (a struct, a
# header) inlined as plain moves up to 256 bytes, longer ones by the C
# library's memcpy/memset; GCC's generic tuning makes those of 33 bytes to
# 8 KiB a `rep movsq`/`rep stosq`, whose start-up costs more than the copy
# on the data path's sizes: 64-byte ib_send_bw 12-20% faster
# (docs/bench-history.md; integ/build checks the hot functions). Only where
# the compiler takes the options (GCC).
STRINGOP_FLAGS := -mmemcpy-strategy=unrolled_loop:256:noalign,libcall:-1:noalign \
	-mmemset-strategy=unrolled_loop:256:noalign,libcall:-1:noalign
ifeq ($(ARCH),x86)
STRINGOP_TAKEN := $(shell $(CC) $(STRINGOP_FLAGS) -x c -c -o /dev/null /dev/null 2>/dev/null && \
	echo '$(STRINGOP_FLAGS)')
CFLAGS += $(STRINGOP_TAKEN)
endif
# A change of the compiler or of its flags rebuilds every object: they are
# kept in $(OUT)/cflags, written (as make reads this file, so that make -n
# sees it too) only when they differ.
CC_SEEN := $(CC) $(CPPFLAGS) $(CFLAGS)
ifneq ($(CC_SEEN),$(shell cat $(OUT)/cflags 2>/dev/null))
$(shell mkdir -p $(OUT) && echo '$(CC_SEEN)' > $(OUT)/cflags)
endif
PIC_CFLAGS = $(filter-out $(SAN_FLAGS),$(CPPFLAGS) $(CFLAGS))

LIB_SRCS := $(wildcard user/lib/*.c)
LIB_OBJS := $(patsubst %.c,$(OUT)/%.o,$(LIB_SRCS))
LIB := $(OUT)/libxhca.a
# libxhca.so.1: the application API (include/xhca/xhca.h) alone, every
# symbol of version XHCA_1.0 (user/lib/libxhca.map), from position-
# independent objects of its own (pic-api/: default visibility, the
# version script chooses what is exported).
SOVERSION := 1
API_SRCS := $(addprefix user/lib/,session.c mem.c adopt.c cq.c qp.c post.c direct.c pkt.c icrc.c \
	ctl.c)
API_OBJS := $(patsubst %.c,$(OUT)/pic-api/%.o,$(API_SRCS))
SO_LIB := $(OUT)/libxhca.so.$(SOVERSION)
XHCAD_SRCS := $(wildcard user/xhcad/*.c)
XHCAD_OBJS := $(patsubst %.c,$(OUT)/%.o,$(XHCAD_SRCS))
# xhcad's files in layers, lowest first: a file calls only functions of the
# files before it (make check-layers, run by make test, checks it from the
# objects' symbols; docs/design.md says what each layer does). A new file
# takes its place here.
#   util: clocks, errors | sched reorder locksvc: pure | kfeat: the kernel
#   probed | loader: the device
#   (program, maps) | xsk: AF_XDP sockets, UMEM | xsk_io: their data
#   path | resp_exec: READ/ATOMIC
#   execution, ACK frames (pure) | pxq: the proxy's mailbox | hostmem, mr:
#   host memory, regions, PDs | qptab: the QP table | flowq, cq, session:
#   flow queues, CQs/SRQs, sessions | net: addresses, neighbours | receive:
#   a QP's receive side | respond: RC responder | completer: responses
#   in, retries, completions | request: the requester: send queues, packets
#   out | cm_wire: the CM's MADs built (pure) | cm: the connection manager
#   (QP1): ids, listeners, timers | dispatch: a frame to its stage |
#   mcast | proxy_thread: the proxy thread | proxy: the main thread's side
#   of it | filter |
#   cli: the CLI's receive side | round: one round of the data path | qp:
#   QP verbs | qp_restore: the QP table rebuilt at start | qp_show: QPs
#   shown, counters | state: restart | client: a session's end | ctl_server:
#   the control socket | loop | main
XHCAD_LAYERS := util sched reorder locksvc kfeat loader loopback ibview steer xsk xsk_io gso resp_exec pxq hostmem mr qptab flowq cq \
	session net receive respond completer request cm_wire cm dispatch mcast proxy_thread proxy filter cli \
	round qp qp_restore qp_show state client ctl_server engine loop main
# xhca's libibverbs.so.1 (user/verbs/): its own directory, never over the
# system's; `xhca exec` runs a program with it. Position-independent objects
# of its own and of the libxhca files it needs, every symbol hidden but the
# export set of rdma-core 44 (libibverbs.map).
VERBS_SRCS := $(wildcard user/verbs/*.c) $(API_SRCS) user/lib/port.c
VERBS_OBJS := $(patsubst %.c,$(OUT)/pic/%.o,$(VERBS_SRCS))
VERBS_LIB := $(OUT)/verbs/libibverbs.so.1
# xhca's librdmacm.so.1 (user/rdmacm/): beside the verbs library (xhca exec
# puts that directory first), linked to it, every symbol hidden but the
# export set of rdma-core 44 (librdmacm.map). Its files in layers, lowest
# first, as XHCAD_LAYERS (user/rdmacm/xcm.h says what each does); the pure
# ones are in the unit tests too.
RDMACM_LAYERS := compat addrinfo inet port qpattr evconv device channel id qp event addr conn \
	mcast ep
RDMACM_PURE := addrinfo inet port qpattr evconv
RDMACM_OBJS := $(patsubst %,$(OUT)/pic/user/rdmacm/%.o,$(RDMACM_LAYERS))
RDMACM_LIB := $(OUT)/verbs/librdmacm.so.1
BINS := $(OUT)/xhcad $(OUT)/xhca $(OUT)/xhca-gen $(OUT)/xhca-bench $(OUT)/xhca-recv $(OUT)/xhca-rc
TEST_BINS := $(OUT)/test_unit $(OUT)/xhca-apptest $(OUT)/xhca-rctest $(OUT)/xhca-ctltest \
	$(OUT)/xhca-cmtest $(OUT)/px_counter.so $(OUT)/xhca-impair $(OUT)/xhca-verbstest \
	$(OUT)/xhca-rdmacmtest $(OUT)/xhca-hostile $(OUT)/xhca-neightest $(OUT)/tc_count.bpf.o

# Packages the build, tests and demo need, as "command-or-file:package".
DEPS := clang:clang llc:llvm /usr/include/bpf/libbpf.h:libbpf-dev \
	/usr/include/xdp/libxdp.h:libxdp-dev bpftool:bpftool xdp-loader:xdp-tools \
	ip:iproute2 /usr/lib/python3/dist-packages/scapy:python3-scapy tshark:tshark \
	/usr/include/libelf.h:libelf-dev /usr/include/zlib.h:zlib1g-dev \
	/usr/include/libnl3/netlink/route/neighbour.h:libnl-route-3-dev \
	pkg-config:pkg-config ethtool:ethtool nsenter:util-linux make:make gcc:gcc \
	ping:iputils-ping /usr/include/infiniband/verbs.h:libibverbs-dev \
	ibv_rc_pingpong:ibverbs-utils ib_send_bw:perftest \
	qemu-system-x86_64:qemu-system-x86 /usr/share/doc/busybox-static/copyright:busybox-static \
	/usr/lib/$(shell gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/libibverbs/librxe-rdmav34.so:ibverbs-providers \
	cpio:cpio depmod:kmod xz:xz-utils killall:psmisc groff:groff-base sockperf:sockperf iperf3:iperf3 \
	dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian \
	systemd-analyze:systemd systemd-nspawn:systemd-container \
	/usr/include/rdma/rdma_cma.h:librdmacm-dev rping:rdmacm-utils debootstrap:debootstrap \
	/usr/lib/python3/dist-packages/pyverbs:python3-pyverbs ucx_info:ucx-utils \
	fi_info:libfabric-bin mpirun:openmpi-bin mpicc:libopenmpi-dev

.PHONY: all deps compile progs ready check-layers check-man test unit test-sanitize test-unit test-integ test-interop test-rxe test-kernels test-stack test-fresh interop fuzz demo bench vmlinux install deb clean
.DELETE_ON_ERROR:
.SECONDARY:

all: compile

compile: progs $(TEST_BINS)

# What make install installs.
progs: $(BPF_OBJS) $(BINS) $(VERBS_LIB) $(RDMACM_LIB) $(LIB) $(SO_LIB)

# What the targets that run things need: the packages first (make deps
# installs only what is missing), then the build.
ready:
	$(Q)$(MAKE) --no-print-directory deps
	$(Q)$(MAKE) --no-print-directory compile

# (but xhca-verbstest.d, of a build from before tests/integ/verbstest.c
# became tests/integ/verbstest/: it names that file, gone; the program is
# linked from objects now, which write none)
-include $(filter-out $(OUT)/xhca-verbstest.d,$(shell find $(OUT) -name '*.d' 2>/dev/null))

deps:
	$(Q)missing=""; for d in $(DEPS); do \
		c=$${d%%:*}; p=$${d#*:}; \
		case $$c in /*) [ -e $$c ] || missing="$$missing $$p";; \
		*) command -v $$c >/dev/null 2>&1 || [ -x /usr/sbin/$$c ] || missing="$$missing $$p";; esac; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@# the guests' kernels (tests/interop/rxe, tests/kernels): downloaded by apt into the
	@# cache, never installed here; without it the RXE cases say SKIPPED
	$(Q)tests/interop/rxe/image.sh fetch || echo "deps: a kernel package for the guests is missing; their tests will be skipped"

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c vmlinux/vmlinux.h
	@mkdir -p $(dir $@)
	@echo "  BPF     $@"
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/impair.skel.h: $(OUT)/impair.bpf.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name impair_bpf > $@

$(OUT)/%.skel.h: $(OUT)/bpf/%.bpf.o | $(OUT)
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

$(OUT):
	$(Q)mkdir -p $(OUT)

# (the skeletons exist before the first compile; later, the .d files say who
# includes them)
$(OUT)/%.o: %.c $(OUT)/cflags | $(SKELS)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# the neighbour lookup asks the kernel through libnl-route
$(OUT)/user/lib/neigh.o: CPPFLAGS += $(NL_CFLAGS)
$(OUT)/user/xhcad/steer.o: CPPFLAGS += $(NL_CFLAGS)

# xhca exec looks for the verbs library in ../lib/MULTIARCH/xhca/verbs too
$(OUT)/tools/xhca/exec.o: CPPFLAGS += -DXHCA_MULTIARCH='"$(MULTIARCH)"'

# position-independent objects: pic/ for the verbs library (every symbol
# hidden but those it exports), pic-api/ for libxhca.so
define cc_pic
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(PIC_CFLAGS) -fPIC $(1) -c $< -o $@
endef
$(OUT)/pic/%.o: %.c $(OUT)/cflags | $(OUT)
	$(call cc_pic,-fvisibility=hidden)
$(OUT)/pic-api/%.o: %.c $(OUT)/cflags | $(OUT)
	$(call cc_pic,)

$(VERBS_LIB): $(VERBS_OBJS) user/verbs/libibverbs.map
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(PIC_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libibverbs.so.1 -Wl,-z,now \
		-Wl,--no-undefined -Wl,--version-script=user/verbs/libibverbs.map $(VERBS_OBJS) \
		-o $@ -lpthread

$(SO_LIB): $(API_OBJS) user/lib/libxhca.map
	@echo "  LD      $@"
	$(Q)$(CC) $(PIC_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(notdir $@) -Wl,-z,now \
		-Wl,--no-undefined -Wl,--version-script=user/lib/libxhca.map $(API_OBJS) -o $@ \
		-lpthread

$(RDMACM_LIB): $(RDMACM_OBJS) $(VERBS_LIB) user/rdmacm/librdmacm.map
	@echo "  LD      $@"
	$(Q)$(CC) $(PIC_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,librdmacm.so.1 -Wl,-z,now \
		-Wl,--no-undefined -Wl,--version-script=user/rdmacm/librdmacm.map $(RDMACM_OBJS) -o $@ \
		-L$(OUT)/verbs -l:libibverbs.so.1 -lpthread

# (made anew: a member of a source gone would stay in it, and be linked)
$(LIB): $(LIB_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUT)/xhcad: $(XHCAD_OBJS) $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# the CLI: one file per object (tools/xhca/)
CLI_OBJS := $(patsubst %.c,$(OUT)/%.o,$(wildcard tools/xhca/*.c))
$(OUT)/xhca: $(CLI_OBJS) $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# the generator: one file per role (tools/xhca-gen/)
GEN_OBJS := $(patsubst %.c,$(OUT)/%.o,$(wildcard tools/xhca-gen/*.c))
$(OUT)/xhca-gen: $(GEN_OBJS) $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(OUT)/xhca-recv: $(OUT)/tools/xhca-recv.o $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(OUT)/xhca-rc: $(OUT)/tools/xhca-rc.o $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(OUT)/xhca-bench: $(OUT)/tools/xhca-bench.o $(OUT)/user/xhcad/sched.o $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# the unit tests: xhcad's layers up to the dispatch, as they are, but the
# device's (loader.c) and the AF_XDP one (tests/unit/layers.c stands in);
# loopback.c's addresses, as net.c reads them
UNIT_LAYERS := util sched reorder locksvc kfeat loopback steer gso resp_exec pxq hostmem mr qptab flowq cq session net \
	receive respond completer request cm_wire cm dispatch
$(OUT)/test_unit: $(patsubst %.c,$(OUT)/%.o,$(wildcard tests/unit/*.c)) \
		  $(patsubst %,$(OUT)/user/xhcad/%.o,$(UNIT_LAYERS)) \
		  $(patsubst %,$(OUT)/user/rdmacm/%.o,$(RDMACM_PURE)) $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# An application's proxy handler, for the tests and the example of the ABI.
$(OUT)/px_counter.so: tests/integ/px_counter.c $(OUT)/cflags
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -fPIC -shared $< -o $@

$(OUT)/xhca-apptest: $(OUT)/tests/integ/apptest.o $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# one application on two xhca hosts: its files in tests/integ/rctest/
$(OUT)/xhca-rctest: $(patsubst %.c,$(OUT)/%.o,$(wildcard tests/integ/rctest/*.c)) $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(OUT)/xhca-ctltest: $(OUT)/tests/integ/ctltest.o $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(OUT)/xhca-hostile: $(OUT)/tests/integ/hostile.o $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(OUT)/xhca-cmtest: $(OUT)/tests/integ/cmtest.o $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(OUT)/xhca-neightest: $(OUT)/tests/integ/neightest.o $(LIB)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# A verbs program of the tests' own (its files in tests/integ/verbstest/):
# linked to Debian's libibverbs as any application is, run on xhca's by
# xhca exec.
$(OUT)/xhca-verbstest: $(patsubst %.c,$(OUT)/%.o,$(wildcard tests/integ/verbstest/*.c))
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ -libverbs

# An rdma_cm program of the tests' own: linked to Debian's librdmacm, run on
# xhca's by xhca exec.
$(OUT)/xhca-rdmacmtest: tests/integ/rdmacmtest.c $(OUT)/cflags | $(OUT)
	@echo "  CC/LD   $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ -lrdmacm -libverbs

# The tests' netem-like impairment (tc ingress on a bridge's ports).
$(OUT)/impair.bpf.o: tests/impair/impair.bpf.c vmlinux/vmlinux.h | $(OUT)
	@echo "  BPF     $@"
	$(Q)$(CLANG) $(BPF_CFLAGS) -Itests/impair -c $< -o $@

# A user's tc filter beside xhca_steer (integ/steer).
$(OUT)/tc_count.bpf.o: tests/tc/count.bpf.c vmlinux/vmlinux.h | $(OUT)
	@echo "  BPF     $@"
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/xhca-impair: tests/impair/impair.c $(OUT)/cflags $(OUT)/impair.skel.h $(LIB)
	@echo "  CC/LD   $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -Itests/impair $< $(LIB) -o $@ $(LDLIBS)

# make -s print-VAR: a variable's value (tests/integ/build.sh)
print-%:
	@echo $($*)

# xhcad's files call only downward (XHCAD_LAYERS), and librdmacm's
# (RDMACM_LAYERS).
CHECK_LAYERS = tests/check_layers.sh "$(XHCAD_LAYERS)" $(XHCAD_OBJS) && \
	tests/check_layers.sh "$(RDMACM_LAYERS)" $(RDMACM_OBJS)
check-layers: $(XHCAD_OBJS) $(RDMACM_OBJS)
	$(Q)$(CHECK_LAYERS)

# Every function libxhca.so.1 exports (user/lib/libxhca.map) has its section
# 3 page in man/man3 (or a link page to the one that documents it), and
# every page renders without a warning.
CHECK_MAN = tests/check_man3.sh user/lib/libxhca.map man
check-man:
	$(Q)$(CHECK_MAN)

# make test's: each check again only when what it reads changed since it
# last passed (a stamp in the build).
$(OUT)/.layers-checked: $(XHCAD_OBJS) $(RDMACM_OBJS) tests/check_layers.sh Makefile
	$(Q)$(CHECK_LAYERS) && touch $@
$(OUT)/.man-checked: user/lib/libxhca.map $(wildcard man/man3/*.3) tests/check_man3.sh
	$(Q)$(CHECK_MAN) && touch $@

# T="NAME ...": only those tests (tests/run.sh: unit/FILE, unit/FILE/CASE or a
# pattern, integ/NAME, a NAME)
test: ready
	$(Q)$(MAKE) --no-print-directory $(OUT)/.layers-checked $(OUT)/.man-checked
	$(Q)XHCA_BUILD=$(CURDIR)/$(OUT) SANITIZE=$(SANITIZE) tests/run.sh $(T)

# The unit tests alone: test_unit and what it is made of, built, then run
# (TAP); T="PATTERN ...": the cases FILE/CASE each matches (test_unit -t;
# test_unit -l lists them). No make deps, no check-layers: for a quick
# round while changing code; make test runs the same cases.
unit: $(OUT)/test_unit
	$(Q)./$(OUT)/test_unit $(foreach t,$(T),-t '$(t)')

# The unit and integration tests with sanitized programs (SANITIZE=1).
test-sanitize:
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 ready
	$(Q)XHCA_BUILD=$(CURDIR)/build/sanitize SANITIZE=1 tests/run.sh unit integ

test-unit test-integ test-interop: ready
	$(Q)XHCA_BUILD=$(CURDIR)/$(OUT) SANITIZE=$(SANITIZE) tests/run.sh $(patsubst test-%,%,$@)

# The packages on a fresh Debian 12 (tests/fresh/fresh.sh): a minimal bookworm
# made by debootstrap (cached in /var/cache/xhca/fresh), booted in a
# container, apt install ./xhca_*.deb there, two units, ibv_rc_pingpong
# through xhca exec. Not part of make test: it downloads from the mirror.
test-fresh: ready
	$(Q)tests/run.sh fresh

# The RXE interop harness (tests/interop/rxe.sh: RXE in a qemu guest, about
# 7 minutes; not part of make test, .ci/run runs it after make test).
# make interop: the same, showing both ends' output and RXE's counters per
# case.
test-rxe: ready
	$(Q)tests/run.sh rxe

# The RDMA stack on xhca (tests/stack): rdma-core's own suite (from
# ../shared/rdma-core-tests), UCX, libfabric, Open MPI; .ci/run runs it.
test-stack: ready
	$(Q)XHCA_BUILD=$(CURDIR)/$(OUT) tests/run.sh stack

# xhca on the kernels Debian 12 offers (tests/kernels/kernels.sh): its 6.1
# and 6.12 kernel packages in qemu guests with this host's root, this
# build's xhcad against this host's; .ci/run runs it.
test-kernels: ready
	$(Q)tests/run.sh kernels

interop: ready
	$(Q)RXE_VERBOSE=1 tests/run.sh rxe

# FUZZ_N mutated and random frames through xhca_rx (BPF_PROG_TEST_RUN), from
# FUZZ_SEED (default: the time; the result line names it, to replay a run);
# then the ring fuzzer with the sanitized xhcad (tests/fuzz/rings.sh:
# applications scribbling over their rings for RING_FUZZ_S, 60, seconds).
# make test runs a short pass from a fixed seed.
FUZZ_N ?= 3000000
fuzz: ready
	$(Q)./$(OUT)/test_unit --fuzz $(FUZZ_N) $${FUZZ_SEED:-$$(date +%s)}
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 ready
	$(Q)XHCA_BUILD=$(CURDIR)/build/sanitize SANITIZE=1 tests/run.sh fuzz/rings

demo: ready
	$(Q)tests/demo.sh

bench: ready
	$(Q)tests/bench.sh
	$(Q)BENCH_MTU=4200 tests/bench_verbs.sh
	$(Q)BENCH_MTU=1500 tests/bench_verbs.sh
	$(Q)tests/bench_engines.sh
	$(Q)tests/bench_stack.sh
	$(Q)tests/bench_kfuncs.sh

# The unit's and the pkg-config file's paths: those of this install.
SUBST_PATHS = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@VERSION@|$(VERSION)|g' -e 's|@CONFDIR@|/etc/xhca|g'

install: progs
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/xhca/verbs \
		$(DESTDIR)$(PREFIX)/include/xhca $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/share/man/man3 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(TMPFILESDIR)
	install -m 0755 $(OUT)/xhcad $(DESTDIR)$(PREFIX)/sbin/xhcad
	install -m 0755 $(OUT)/xhca $(OUT)/xhca-gen $(OUT)/xhca-bench $(OUT)/xhca-recv $(OUT)/xhca-rc \
		$(DESTDIR)$(PREFIX)/bin/
	install -m 0644 $(OUT)/bpf/xhca.bpf.o $(DESTDIR)$(LIBDIR)/xhca/xhca.bpf.o
	install -m 0644 include/xhca/*.h $(DESTDIR)$(PREFIX)/include/xhca/
	install -m 0644 $(LIB) $(SO_LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SO_LIB)) $(DESTDIR)$(LIBDIR)/libxhca.so
	$(SUBST_PATHS) user/lib/libxhca.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/libxhca.pc
	install -m 0644 $(VERBS_LIB) $(DESTDIR)$(LIBDIR)/xhca/verbs/libibverbs.so.1
	install -m 0644 $(RDMACM_LIB) $(DESTDIR)$(LIBDIR)/xhca/verbs/librdmacm.so.1
	install -m 0644 man/xhcad.8 man/xhca.8 man/xhca-gen.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 0644 man/man3/*.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	$(SUBST_PATHS) systemd/xhcad@.service.in >$(DESTDIR)$(UNITDIR)/xhcad@.service
	install -m 0644 systemd/tmpfiles.conf $(DESTDIR)$(TMPFILESDIR)/xhca.conf

# Debian packages (debian/) into build/debs, with objects of their own
# (debian/rules: build/deb, dpkg-buildflags' hardening), kept between runs.
# dpkg-buildpackage's files go there too, not into the tree's parent.
DEBS := $(CURDIR)/build/debs
deb:
	$(Q)rm -rf $(DEBS) && mkdir -p $(DEBS)
	$(Q)XHCA_DEB_DIR=$(DEBS) DEB_BUILD_OPTIONS="$${DEB_BUILD_OPTIONS:-parallel=$$(nproc)}" \
		dpkg-buildpackage -b -uc -us --post-clean \
		--buildinfo-option=-u$(DEBS) --changes-option=-u$(DEBS) \
		--buildinfo-file=$(DEBS)/xhca.buildinfo --changes-file=$(DEBS)/xhca.changes
	@ls $(DEBS)/*.deb

clean:
	rm -rf build
