.PHONY: run test setup lint

# Set up and run the service on the embedded defaults (PostgreSQL, worker,
# embeddings, generation). Prints the URL and a working API key. Ctrl-C stops all.
run:
	scripts/run

# Set up and run ruff, mypy and pytest against real PostgreSQL + pgvector and Redis.
test:
	scripts/test $(ARGS)

setup:
	scripts/setup

lint:
	.venv/bin/python -m ruff check . && .venv/bin/python -m mypy daneshyar languages workspaces resources retrieval chat evaluations console widget tests bench
