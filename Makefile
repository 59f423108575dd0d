# Containing Memory - every entry point of the kit.  `make help` lists them.
#
# The work is done by the small scripts in labs/host/; this file checks the
# variables a reader passes and strings the steps together.

SHELL := /bin/sh
BUILD := build
FLAVOR ?= default
KVM ?= 0
# TIMEOUT (seconds per boot): unset, each lab has its own ("# timeout:"
# in labs/chNN/lab.sh, three times that on the debug flavour).
TIMEOUT ?=
export BUILD KVM TIMEOUT

# Validate the variables before anything runs: one clear line, then stop.
# Only digits may go near a shell (and no eval: a value may hold '$').
nondigits = $(strip $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst \
	5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1))))))))))))
LAST := $(shell sh -c '. labs/host/common.sh; nr_patches')

ifneq ($(filter kernel lab shell tree exercise grade stress cost perf contend,$(MAKECMDGOALS)),)
ifneq ($(call nondigits,$(value CH)),)
$(error CH is not a chapter number: valid chapters are 0-$(LAST) (0 = unpatched 6.1))
endif
NN := $(shell sh labs/host/chapter.sh '$(CH)' 2>&1)
ifneq ($(.SHELLSTATUS),0)
$(error $(NN))
endif
endif
# make exercise: only chapters with a labs/chNN/skeleton have one.
ifneq ($(filter exercise,$(MAKECMDGOALS)),)
ifeq ($(wildcard labs/ch$(NN)/skeleton),)
$(error CH=$(CH) has no exercise: the chapters with one (a labs/chNN/skeleton) are $(patsubst labs/ch%/skeleton,%,$(sort $(wildcard labs/ch*/skeleton))))
endif
endif
# LAB=N: which lab make lab / make try runs (default: the chapter's own).
ifneq ($(value LAB),)
ifneq ($(call nondigits,$(value LAB)),)
$(error LAB is not a lab number: valid labs are 0-$(LAST))
endif
LABNN := $(shell sh labs/host/chapter.sh '$(LAB)' 2>&1)
ifneq ($(.SHELLSTATUS),0)
$(error LAB=$(LAB) is not a lab: valid labs are 0-$(LAST))
endif
endif
# LABFILE=path: run this script in the guest instead of the lab's own
# (the lab's boot options and expected splats still apply).
ifneq ($(value LABFILE),)
ifneq ($(words $(value LABFILE)),1)
$(error LABFILE must be one path, without spaces)
endif
ifeq ($(wildcard $(value LABFILE)),)
$(error LABFILE=$(value LABFILE): no such file)
endif
export LABFILE
endif
# make stress: SECONDS of load (60), SEED (a new one each run, printed),
# CPUS (4, the lab kernels' NR_CPUS), on the debug flavour unless FLAVOR
# is given.
SECONDS ?= 60
CPUS ?= 4
ifneq ($(filter stress try-stress,$(MAKECMDGOALS)),)
ifneq ($(call nondigits,$(value SECONDS))$(filter 0 00 000,$(value SECONDS)),)
$(error SECONDS must be a whole number of seconds, above 0)
endif
ifneq ($(words $(value SECONDS)),1)
$(error SECONDS must be a whole number of seconds, above 0)
endif
ifeq ($(filter 1 2 3 4,$(value CPUS)),)
$(error CPUS must be 1, 2, 3 or 4 (the lab kernels have NR_CPUS=4))
endif
ifneq ($(value SEED),)
ifneq ($(call nondigits,$(value SEED))$(filter-out 1,$(words $(value SEED))),)
$(error SEED must be a whole number)
endif
endif
STRESS_SEED := $(or $(value SEED),$(shell od -An -N2 -tu2 /dev/urandom | tr -d ' '))
STRESS_FLAVOR := $(if $(filter command line environment,$(origin FLAVOR)),$(FLAVOR),debug)
endif
ifneq ($(filter contend,$(MAKECMDGOALS)),)
ifneq ($(call nondigits,$(value RUNS))$(filter 0 00,$(value RUNS))$(filter-out 1,$(words $(value RUNS))),)
$(error RUNS must be a whole number of runs, 1 or more)
endif
endif
ifeq ($(filter default debug memcg none,$(value FLAVOR)),)
$(error FLAVOR is not a flavour: use FLAVOR=default, debug, memcg or none)
endif
ifeq ($(filter 0 1,$(value KVM)),)
$(error KVM must be 0 (TCG, the default) or 1)
endif
ifneq ($(call nondigits,$(value TIMEOUT))$(filter 0 00 000,$(value TIMEOUT)),)
$(error TIMEOUT must be a whole number of seconds (per QEMU boot), above 0)
endif
ifneq ($(filter-out 0 1,$(words $(value TIMEOUT))),)
$(error TIMEOUT must be a whole number of seconds (per QEMU boot), above 0)
endif

CODE := $(abspath $(BUILD))/code
INITRAMFS := $(BUILD)/initramfs.cpio.gz

.PHONY: all help deps check kernel lab shell tree patches hooks code \
	code-test initramfs clean exercise try try-shell try-stress grade stress \
	cost perf contend

all: deps
	@sh labs/host/check.sh all

help:
	@echo 'Containing Memory: rebuild the 2007 memory controller on Linux 6.1'
	@echo
	@echo '  make                  install what is missing, build the book and every'
	@echo '                        chapter kernel, run every lab, print a summary'
	@echo '  make check            the test suite CI runs (ends "N passed, N failed")'
	@echo '  make kernel CH=N      build build/chNN/bzImage (patches 1..N applied)'
	@echo '  make lab CH=N         build the kernel if needed and run lab N in QEMU'
	@echo '  make shell CH=N       boot the chapter-N kernel with a shell'
	@echo '  make stress CH=N      everything at once on the debug kernel, invariants'
	@echo '                        checked (SECONDS=60 SEED=n CPUS=4 FLAVOR=debug)'
	@echo '  make cost CH=N        instructions per page fault, in the root, in a'
	@echo '                        container and 2, 4, 8 levels down (one CPU,'
	@echo '                        QEMU -icount)'
	@echo '  make perf CH=N        lab 13 on the kit, on no controller and on memcg'
	@echo '                        (N=11..$(LAST)): instructions per fault and per'
	@echo '                        page streamed, side by side'
	@echo '  make contend CH=N     page faults on 1, 2 and 4 vCPUs at once, in real'
	@echo '                        time: the kit, no controller and memcg side by'
	@echo '                        side, RUNS=3 times (N=11..$(LAST))'
	@echo '  make book             build/book/index.html and the EPUB'
	@echo '  make tree CH=N        build/tree: the kernel at chapter N, to edit and try'
	@echo '  make exercise CH=N    build/tree at chapter N with TODOs to fill in'
	@echo '  make try              build build/tree as it is and run its lab (LAB=K)'
	@echo '  make try-shell        build build/tree as it is and boot it with a shell'
	@echo '  make try-stress       make stress on build/tree as it is (SECONDS, SEED,'
	@echo '                        CPUS, FLAVOR as for make stress)'
	@echo '  make grade CH=N       labs 0-N on build/tree, with points and a transcript'
	@echo '  make patches          turn build/tree commits back into patches/'
	@echo '  make hooks            compile the changed files with every hook on, and sparse'
	@echo '  make clean            remove build/ (the kernel tree too)'
	@echo
	@echo '  CH=0..$(LAST)   FLAVOR=default|debug|memcg|none   KVM=0|1   TIMEOUT=seconds'
	@echo '  (per boot; default: set by each lab, 3x on debug)'
	@echo '  FLAVOR=debug: KASAN, lockdep, DEBUG_VM on; FLAVOR=memcg: the same tree with'
	@echo '  the kit controller off and mainline memcg on (build/chNN-memcg);'
	@echo '  FLAVOR=none: no memory controller at all (the cost baseline)'
	@echo '  LAB=0..$(LAST) (make lab, make try: run lab K instead)   LABFILE=path (run'
	@echo '  that script instead of the lab, with its boot options)'

deps:
	@sh labs/host/deps.sh

check: deps
	@sh labs/host/check.sh check

kernel: deps
	@sh labs/host/kernel.sh $(NN) $(FLAVOR)

code: deps
	@$(MAKE) -s -C code O=$(CODE)

code-test: deps
	@$(MAKE) -s -C code O=$(CODE) test

# Cheap (about a second), so it is always rebuilt and never stale.
initramfs: code
	@sh labs/host/initramfs.sh $(INITRAMFS)

lab: kernel initramfs
	@sh labs/host/run.sh $(NN) $(or $(LABNN),$(NN)) $(FLAVOR)

cost: deps initramfs
	@sh labs/host/cost.sh $(NN) $(FLAVOR)

perf: deps initramfs
	@sh labs/host/perf.sh $(NN)

# make contend: RUNS (3) boots of each kernel on 1, 2 and 4 vCPUs.
RUNS ?= 3
contend: deps initramfs
	@sh labs/host/contend.sh $(NN) $(RUNS)

stress: deps initramfs
	@sh labs/host/stress.sh $(NN) $(STRESS_FLAVOR) $(SECONDS) $(STRESS_SEED) $(CPUS)

shell: kernel initramfs
	@sh labs/host/shell.sh $(NN) $(FLAVOR)

tree: deps
	@sh labs/host/worktree.sh $(NN)

exercise: deps
	@sh labs/host/worktree.sh $(NN) exercise

try: deps initramfs
	@sh labs/host/try.sh lab $(FLAVOR) $(LABNN)

try-shell: deps initramfs
	@sh labs/host/try.sh shell $(FLAVOR)

try-stress: deps initramfs
	@sh labs/host/stress.sh tree $(STRESS_FLAVOR) $(SECONDS) $(STRESS_SEED) $(CPUS)

grade: deps initramfs
	@sh labs/host/grade.sh $(NN)

patches:
	@sh labs/host/export.sh

hooks: deps
	@sh labs/host/hooks.sh

clean:
	-git -C $(BUILD)/linux worktree prune 2>/dev/null
	rm -rf $(BUILD)

-include book/book.mk
