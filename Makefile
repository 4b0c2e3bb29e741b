PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install lint serve clean

## make demo: install, migrate, load the sample project, start web server and worker.
demo: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo
	./scripts/serve

## make test: install and run the whole suite.
test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
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
