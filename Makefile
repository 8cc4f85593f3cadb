# linkqr — the two commands that matter: `make run` and `make test`.
GO        ?= go
BIN       := bin/linkqr
GOTEST    ?= $(GO) test -race -count=1 -timeout 20m

.PHONY: run build test test-short hostile generate generate-ts check-ts lint check-generated bench bench-topology cluster cluster-stop clean
.PHONY: clients clients-python clients-kotlin

## run: build and serve on the embedded PostgreSQL default (http://127.0.0.1:8080;
## metrics on the private http://127.0.0.1:9090/metrics, LINKQR_METRICS_ADDR)
run: build
	./$(BIN) serve

## build: compile the linkqr binary into bin/
build:
	$(GO) build -o $(BIN) ./cmd/linkqr

## test: the whole suite on real PostgreSQL (and Redis when installed). The
## hostile-input suite (internal/hostile) runs last and verbose, so that its
## count of hostile requests is printed; both parts run, either failing fails
HOSTILE := ./internal/hostile
test:
	$(GO) run ./internal/testkit/testenv -- sh -c '\
	  $(GOTEST) $$($(GO) list ./... | grep -v "/internal/hostile$$"); status=$$?; \
	  $(GOTEST) -v $(HOSTILE) || status=1; exit $$status'

## test-short: the fast lane while working: go test -short (the slowest tests
## skip, docs/development.md#tests) without go vet's pass per package (make
## lint runs vet once for all)
test-short:
	$(GO) run ./internal/testkit/testenv -- $(GO) test -short -vet=off ./...

## hostile: only the hostile-input suite (API, forms, MCP), verbose
hostile:
	$(GO) run ./internal/testkit/testenv -- $(GOTEST) -v $(HOSTILE)

## generate: regenerate sqlc (one block per owner in sqlc.yaml, into
## internal/<owner>/internal/<owner>db), templ, the built-in country data's tables
## (internal/geo) and the TypeScript client's types (committed). The sqlc output
## directories hold nothing else: they are emptied first, so the output of a block
## that is gone goes too (check-generated sees it)
SQLC_OUT := internal/*/internal/*db
generate:
	rm -rf $(SQLC_OUT)
	$(GO) tool sqlc generate
	$(GO) tool templ generate -path web
	$(GO) generate ./internal/geo
	@$(MAKE) --no-print-directory generate-ts

# The TypeScript client's types come from internal/api/openapi.yaml through the
# pinned openapi-typescript (clients/typescript/package-lock.json); npm ci
# installs it first when node_modules is absent. Without npm this step is
# skipped with a warning, except in CI (CI or LINKQR_TEST_STRICT set), where
# it fails.
TS_DIR := clients/typescript
generate-ts:
	@if command -v npm >/dev/null 2>&1; then \
	  cd $(TS_DIR) && { test -d node_modules || npm ci --no-audit --no-fund; } && npm run --silent generate; \
	else \
	  echo "WARNING: npm not found: $(TS_DIR)/src/schema.gen.ts NOT regenerated"; \
	  test -z "$$CI$$LINKQR_TEST_STRICT"; \
	fi

## check-ts: the TypeScript client and its tests compile with tsc --strict
check-ts:
	@if command -v npm >/dev/null 2>&1; then \
	  cd $(TS_DIR) && { test -d node_modules || npm ci --no-audit --no-fund; } && npm run --silent typecheck; \
	else \
	  echo "WARNING: npm not found: TypeScript NOT type-checked"; \
	  test -z "$$CI$$LINKQR_TEST_STRICT"; \
	fi

## check-generated: fail when committed generated code differs from the generators' output,
## or the TypeScript client does not compile with tsc --strict
GENERATED := '$(SQLC_OUT)/*' 'web/*_templ.go' internal/geo/names_table.go internal/geo/ipv6_table.go internal/geo/ipv6.bin $(TS_DIR)/src/schema.gen.ts $(TS_DIR)/src/version.gen.ts $(TS_DIR)/src/problems.gen.ts $(TS_DIR)/package.json
check-generated: generate check-ts
	@git diff --exit-code -- $(GENERATED) || (echo "generated code is stale: run make generate and commit"; exit 1)
	@test -z "$$(git status --porcelain -- $(GENERATED))" || (git status --short -- $(GENERATED); echo "generated files are untracked: run make generate and commit"; exit 1)

## lint: gofmt, go vet, the import rules of the house (internal/archtest) and the
## documentation's relative links and #anchors (internal/doclinks; also in make test)
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1)
	$(GO) vet ./...
	$(GO) test -count=1 ./internal/archtest ./internal/doclinks

## bench: linkqr against a bare net/http baseline (throughput ratios, p50/p99, errors,
## peak RSS, scans verified; see cmd/linkqr-bench), then the Go micro-benchmarks
## (inside testenv, so the rate limiter's Redis benchmarks have a redis-server).
## BENCHFLAGS passes flags, e.g. make bench BENCHFLAGS='-duration 30s -strict'
bench: build
	$(GO) build -o bin/linkqr-bench ./cmd/linkqr-bench
	./bin/linkqr-bench -linkqr $(BIN) $(BENCHFLAGS)
	./bin/linkqr-bench -linkqr $(BIN) -abuse -links 200 -custom-domain '' -rounds 3 $(BENCHFLAGS)
	$(GO) run ./internal/testkit/testenv -- $(GO) test -run '^$$' -bench . -benchmem ./internal/...

## bench-topology: the redirect through HAProxy with 2 redirect instances and with 1,
## on the deploy/ cluster (needs haproxy, pgbouncer, redis-server)
bench-topology: build
	$(GO) build -o bin/linkqr-bench ./cmd/linkqr-bench
	./bin/linkqr-bench -linkqr $(BIN) -topology $(BENCHFLAGS)

## cluster: PostgreSQL primary + replica, PgBouncer, Redis, 2 redirect instances,
## 1 api, 1 worker and HAProxy on this machine (deploy/README.md); cluster-stop ends it
cluster: build
	deploy/cluster.sh start

cluster-stop:
	deploy/cluster.sh stop

## clients: build the client libraries (clients/python/dist/*.whl,
## clients/kotlin/build/linkqr-client.jar)
clients: clients-python clients-kotlin

# The Python client's wheel and sdist, built offline with Debian's
# python3-build and python3-hatchling: the first python3 that has them
# (python3 on PATH may be a pyenv one without Debian's packages). The
# dependency check is skipped because Debian's hatchling declares editables,
# which Debian 12 does not package and a wheel build does not use.
PYTHON ?= $(shell for p in python3 /usr/bin/python3; do $$p -c 'import build, hatchling' 2>/dev/null && { command -v $$p; break; }; done)
clients-python:
	@test -n "$(PYTHON)" || { echo "no python3 with build and hatchling: apt-get install python3-build python3-hatchling"; exit 1; }
	rm -rf clients/python/dist
	cd clients/python && PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m build --no-isolation --skip-dependency-check --outdir dist
	@ls clients/python/dist/*.whl

## clients-kotlin: the Kotlin client's jar with Debian's kotlinc (1.3) and gson; without
## the Kotlin runtime (an application brings kotlin-stdlib, and gson, on its class path)
KT_DIR   := clients/kotlin
KT_BUILD ?= $(KT_DIR)/build
GSON_JAR ?= /usr/share/java/gson.jar
clients-kotlin:
	@mkdir -p $(KT_BUILD)
	kotlinc $(KT_DIR)/src/main/kotlin -cp $(GSON_JAR) -jvm-target 1.8 -nowarn -d $(KT_BUILD)/linkqr-client.jar

clean:
	rm -rf bin clients/python/dist $(KT_DIR)/build
