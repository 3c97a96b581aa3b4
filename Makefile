# The two commands: `make run` starts the platform, `make test` runs every test.
# Both first install what is missing (libzmq3-dev from apt; for the tests pyzmq from PyPI and chromium from apt).

SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_INSTALL := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends

.PHONY: run test test-hosts test-containers build deps macros test-deps lint format release bench fuzz fuzz-build clean places roads compose-secrets

# The Python tools the tests use live in a virtual environment of this checkout, first on the PATH
# of everything make starts (the tests find `python3`, `st`, `kubernetes-validate` there).
PYTHON_VENV := .build/python
export PATH := $(CURDIR)/$(PYTHON_VENV)/bin:$(PATH)

## macros: the `@WireModel` macros (Shared/WireMacros) built in seconds as a library against the
## toolchain's own swift-syntax (Tools/wire-macros), which every build make starts loads
## (RIDE_WIRE_MACROS, read by Package.swift) instead of compiling swift-syntax from source
## (docs/contributing.md#the-macros); none where the toolchain has no swift-syntax of its own
export RIDE_WIRE_MACROS := $(shell SWIFT=$(firstword $(SWIFT)) Tools/wire-macros --path)
macros:
	@SWIFT=$(firstword $(SWIFT)) Tools/wire-macros > /dev/null

## SwiftPM plans a build anew (10 to 20 s, and may compile a package again: docs/contributing.md#run-one-suite)
## whenever its environment is not the last build's. A shell's and make's own variables change from
## one step to the next, so every swift build make starts runs without them (SWIFT_BUILD), and the
## tests run from the bundle the build made (TESTS) rather than through `swift test`, which plans too.
## A plan writes a package's traits as -D flags in the order of a Set, which follows the process's hash
## seed, and a new order compiles that package again; SWIFT_DETERMINISTIC_HASHING fixes the seed.
SWIFT_BUILD_UNSET = _ SHLVL OLDPWD MAKELEVEL MAKEFLAGS MFLAGS MAKE_TERMOUT MAKE_TERMERR FUZZ_SECONDS FUZZ_FLAGS TEST_WIDTH
SWIFT_BUILD = env $(SWIFT_BUILD_UNSET:%=-u %) SWIFT_DETERMINISTIC_HASHING=1 $(SWIFT) build
TESTS = NO_COLOR=1 .build/debug/RidesharingPackageTests.xctest --testing-library swift-testing

## deps: the system libraries the build links: libzmq (the bus) and SQLite (the services' stores)
deps:
	@missing=""; \
	[ -f /usr/include/zmq.h ] || missing="$$missing libzmq3-dev"; \
	[ -f /usr/include/sqlite3.h ] || missing="$$missing libsqlite3-dev"; \
	if [ -n "$$missing" ]; then \
		echo "make: installing$$missing with apt-get"; \
		$(SUDO) apt-get update -qq && $(APT_INSTALL) $$missing pkg-config >/dev/null; \
	fi

## test-deps: pyzmq, for the tests that check our 7/MDP peers against independent Python ones;
## opentelemetry-proto, with which the tracing test's OTLP receiver decodes the spans;
## standardwebhooks, the reference verifier with which the webhook tests' receiver checks deliveries;
## schemathesis and openapi-spec-validator, which test the gateway against its /openapi.json;
## kubernetes-validate, which checks deploy/kubernetes/ against the Kubernetes schema;
## chromium, the headless browser that loads the share page in the gateway's tests;
## PostgreSQL's server, which the storage suite and the scale-out tests start on a port of their own;
## PostGIS, pgRouting, osm2pgrouting and osmium, with which the pgRouting route provider's tests import the roads
## (and the roads and places tests rebuild their data files from the OpenStreetMap extract);
## prometheus and promtool, which check deploy/prometheus/ and scrape a running platform (docs/metrics.md);
## openssl, with which the push tests make the stand-in services' certificate and the APNs and FCM keys
test-deps: deps
	@command -v openssl >/dev/null 2>&1 || { \
		echo "make: installing openssl (the push tests' certificate and keys)"; \
		$(SUDO) apt-get update -qq && $(APT_INSTALL) openssl >/dev/null; \
	}
	@command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || { \
		echo "make: installing prometheus (promtool checks the alert rules; a test scrapes the platform)"; \
		$(SUDO) apt-get update -qq && $(APT_INSTALL) prometheus >/dev/null; \
	}
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v psql >/dev/null 2>&1 || { \
		echo "make: installing postgresql (the tests start their own throwaway server)"; \
		$(SUDO) apt-get update -qq && $(APT_INSTALL) postgresql >/dev/null; \
	}
	@ls /usr/share/postgresql/*/extension/pgrouting.control /usr/share/postgresql/*/extension/postgis.control >/dev/null 2>&1 \
		&& command -v osm2pgrouting >/dev/null 2>&1 && command -v osmium >/dev/null 2>&1 || { \
		pg=$$(ls /usr/lib/postgresql | sort -n | tail -n 1); \
		echo "make: installing postgis, pgrouting (for PostgreSQL $$pg), osm2pgrouting and osmium-tool (the road and place data, the pgRouting tests)"; \
		$(SUDO) apt-get update -qq && $(APT_INSTALL) postgresql-$$pg-postgis-3 postgresql-$$pg-pgrouting osm2pgrouting osmium-tool >/dev/null; \
	}
	@command -v chromium >/dev/null 2>&1 || { \
		echo "make: installing chromium (headless browser for the share-page tests)"; \
		$(SUDO) apt-get update -qq && $(APT_INSTALL) chromium >/dev/null; \
	}
	@[ -x $(PYTHON_VENV)/bin/pip ] || { \
		rm -rf $(PYTHON_VENV); \
		python3 -m venv $(PYTHON_VENV) 2>/dev/null || { \
			echo "make: installing python3-venv (the Python tools' virtual environment, $(PYTHON_VENV))"; \
			rm -rf $(PYTHON_VENV); \
			$(SUDO) apt-get update -qq && $(APT_INSTALL) python3-venv >/dev/null && python3 -m venv $(PYTHON_VENV); \
		}; \
	}
	@$(PYTHON_VENV)/bin/python3 Tools/python-requirements-check.py 2>/dev/null || { \
		echo "make: installing the Python tools the tests use, at the versions tested (Tools/python-requirements.txt), in $(PYTHON_VENV)"; \
		$(PYTHON_VENV)/bin/pip install -q --disable-pip-version-check -r Tools/python-requirements.txt; \
	}

build: deps macros
	$(SWIFT_BUILD)

## run: build, then start the whole platform as local processes (Ctrl-C stops it);
##      `make run UP_FLAGS=--fake-stripe` charges the rides through a local Stripe-shaped provider
UP_FLAGS ?=
run: build
	.build/debug/ridectl up --simulate $(UP_FLAGS)

## compose-secrets: every secret docker-compose.yml mounts, made once before the first
## `docker compose up` in deploy/compose-secrets (ignored by git; what is there is kept): the CURVE
## keys, a pair per process, and random values for the token key, the notifications key, the gateway's secret key and the
## database's password and URL (compose runs in production mode, which refuses shipped secrets).
## Compose mounts a secret file with its owner and mode on the host, and the image runs as uid 1000:
## so unless you are uid 1000, the files are given to that user (as root) or made readable to it
## (development only — docs/operations.md says how to hold them for anything else). PostgreSQL's
## image reads its password as its own user: that file is readable to all.
COMPOSE_SECRETS = deploy/compose-secrets
compose-secrets: deps macros
	$(SWIFT_BUILD) --product ridectl
	.build/debug/ridectl keys compose $(COMPOSE_SECRETS)
	@case "$$(id -u)" in \
		1000) ;; \
		0) chown -R 1000:1000 $(COMPOSE_SECRETS) ;; \
		*) chmod -R a+rX $(COMPOSE_SECRETS) ;; \
	esac; chmod 0644 $(COMPOSE_SECRETS)/postgres-password

## test: build everything, then run the unit, integration and interop tests and, beside them, the
## fuzzer: its own build, then 30 s of fuzzing (.build/fuzz-output.log); each step's time is printed
## (CI's log). The build takes both cores; the tests leave about a fifth of them idle (processes
## starting, waits), which the fuzzer's build and run take instead of a step of their own.
## A failed run ends with a digest of what failed (.ci/digest), the whole output in .build/test-output.log.
## TEST_WIDTH tests run at once (Swift Testing's own default is all of them: on 2 cores the
## platforms they start then wait behind each other, load 40, and a whole run is slower)
TEST_WIDTH ?= 8
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH = $(TEST_WIDTH)
test: test-deps macros
	@Tools/timed lint $(MAKE) --no-print-directory lint
	@mkdir -p .build
	@Tools/timed "the build" $(SWIFT_BUILD) --build-tests
	@Tools/roads/fetch-extract.sh > /dev/null && Tools/roads/fetch-extract.sh karhula > /dev/null  # once, before the tests that read them run side by side
	@Tools/timed "tests and the fuzzer" bash -c '\
		Tools/timed "the fuzzer (its build, then 30 s)" $(MAKE) --no-print-directory fuzz FUZZ_SECONDS=30 FUZZ_FLAGS=-verbosity=0 \
			> .build/fuzz-output.log 2>&1 & fuzzer=$$!; \
		$(TESTS) 2>&1 | tee .build/test-output.log; tests=$${PIPESTATUS[0]}; \
		wait $$fuzzer; fuzzed=$$?; grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|make: the fuzzer)" .build/fuzz-output.log; \
		[ $$tests = 0 ] || { .ci/digest .build/test-output.log; exit 1; }; \
		[ $$fuzzed = 0 ] || { tail -n 40 .build/fuzz-output.log; echo "make: the fuzzer failed (.build/fuzz-output.log)"; exit 1; }'

## test-hosts: the platform on four hosts made as Linux network namespaces, its bus secured with
## CURVE (root, iproute2, nftables and iptables; a clear skip where namespaces cannot be made), 200 rides
## through each fault — a host cut off and healed, a host's processes killed, delay and loss between
## hosts, the active bus killed, a zone lost with the database's primary and a tracking shard
## (docs/operations.md#hosts). Apart from `make test`: it turns CURVE on for its whole test
## process. CI runs both.
test-hosts: test-deps macros
	@command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 && command -v nft >/dev/null 2>&1 && command -v iptables-legacy >/dev/null 2>&1 \
		|| { $(SUDO) apt-get update -qq && $(APT_INSTALL) iproute2 nftables iptables >/dev/null; }
	$(SWIFT_BUILD) --build-tests
	@mkdir -p .build
	@bash -o pipefail -c 'RIDE_TEST_HOSTS=1 $(TESTS) --filter HostsIntegrationTests 2>&1 | tee .build/test-hosts-output.log' || { .ci/digest .build/test-hosts-output.log; exit 1; }

## test-containers: deploy/Dockerfile built by a real container engine, then docker-compose.yml run
## by it (deploy/containers/README.md): podman made ready (root; apt), base images and the postgres:15
## and haproxy:2.6 stand-ins made where no registry answers (kept in podman's store), ridesharing:dev
## built on the executables this checkout built (where they fit the image; else its build stage
## compiles them) and checked (deploy/containers/test); then the compose secrets, and `docker-compose up` with
## rides flowing through scaling, a crash of every service and each bus, and a PostgreSQL restart
## (Tests/IntegrationTests/Containers). A one-line skip where containers cannot run. CI runs it after test-hosts.
test-containers: test-deps macros
	@deploy/containers/test; rc=$$?; [ $$rc = 0 ] || exit $$rc; \
		if ! podman image exists ridesharing:dev 2>/dev/null; then echo "test-containers: no image, so no compose run (see above)"; exit 0; fi
	$(MAKE) compose-secrets
	$(SWIFT_BUILD) --build-tests
	@bash -o pipefail -c 'RIDE_TEST_CONTAINERS=1 $(TESTS) --filter ComposeContainersTests 2>&1 | tee .build/test-containers-output.log' || { .ci/digest .build/test-containers-output.log; exit 1; }

## fuzz: libFuzzer on what arrives from sockets — the event envelope, 7/MDP framing and the broker,
## every op's params (Fuzz/README.md) — for FUZZ_SECONDS; a broken property or a crash fails it,
## its input saved as .build-fuzz/crash-*. Its own build (fuzz-build, in .build-fuzz): RIDE_FUZZ=1 makes
## Package.swift instrument the fuzzed targets for libFuzzer and AddressSanitizer; the macros are the
## library `make macros` built, so it needs nothing of the main build and runs beside the tests in `make test`.
## Swift's backtracer is off: AddressSanitizer takes its reading of the stack for a bug of its own;
## libFuzzer prints the trace. Fuzz/lsan.supp names the one allocation LeakSanitizer misreads as leaked.
FUZZ_SECONDS ?= 300
FUZZ_FLAGS ?=
fuzz-build: deps macros
	@bash -o pipefail -c 'RIDE_FUZZ=1 $(SWIFT_BUILD) --scratch-path .build-fuzz --product ride-fuzz 2>&1 | grep -v "Cannot export local symbol"'
fuzz: fuzz-build
	@mkdir -p .build-fuzz/corpus
	SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=Fuzz/lsan.supp .build-fuzz/debug/ride-fuzz .build-fuzz/corpus Fuzz/corpus -dict=Fuzz/fuzz.dict -max_total_time=$(FUZZ_SECONDS) \
		-timeout=10 -artifact_prefix=.build-fuzz/ -print_final_stats=1 $(FUZZ_FLAGS)

## lint: the formatter's check (.swift-format); `make format` fixes what it finds
SOURCES = Package.swift Shared Services Tools Tests Fuzz
lint:
	$(SWIFT) format lint --recursive --strict --parallel $(SOURCES)

format:
	$(SWIFT) format format --in-place --recursive --parallel $(SOURCES)

## places: rebuild Shared/Places/Data/helsinki.places from the pinned OpenStreetMap extract (docs/places.md)
places:
	@command -v osmium >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(APT_INSTALL) osmium-tool >/dev/null; }
	extract=$$(Tools/roads/fetch-extract.sh) && python3 Tools/roads/build-places.py "$$extract" Shared/Places/Data/helsinki.places

release: deps macros
	$(SWIFT_BUILD) -c release

## bench: every benchmark, in a release build (prints tables; a missed target does not stop the rest);
## the peers the benchmarks measure beside the platform, from apt: redis-server (bench ingest, bench
## nearby) and nats-server (bench bus)
bench: release
	@command -v redis-server >/dev/null 2>&1 && { command -v nats-server || [ -x /usr/sbin/nats-server ]; } >/dev/null 2>&1 || { \
		echo "make: installing redis-server and nats-server (the peers of bench ingest, bench nearby and bench bus)"; \
		$(SUDO) apt-get update -qq && $(APT_INSTALL) redis-server nats-server >/dev/null; \
	}
	-.build/release/ridectl bench bus
	-.build/release/ridectl bench bus-security
	-.build/release/ridectl bench ingest
	-.build/release/ridectl bench nearby
	-.build/release/ridectl bench memory
	-.build/release/ridectl bench lifecycle
	-.build/release/ridectl bench routes
	-.build/release/ridectl bench logins
	-.build/release/ridectl bench gateway

## roads: rebuild the built-in road graph (Shared/Roads/Data/helsinki.roads, docs/roads.md) from the
## pinned OpenStreetMap extract; the result is byte for byte the committed file
roads:
	@command -v osmium >/dev/null 2>&1 || { \
		echo "make: installing osmium-tool"; \
		$(SUDO) apt-get update -qq && $(APT_INSTALL) osmium-tool >/dev/null; \
	}
	extract="$$(Tools/roads/fetch-extract.sh)" && Tools/roads/build-graph.py "$$extract" Shared/Roads/Data/helsinki.roads

clean:
	rm -rf .build .build-fuzz .data
