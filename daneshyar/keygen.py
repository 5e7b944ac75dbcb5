"""New secrets, for a deployment's environment or for ``make run``.

    python -m daneshyar.keygen                  # KEY=value lines to add to .env
    python -m daneshyar.keygen --data-dir .data  # make run: each missing file, once

Settings never generate a secret (``daneshyar/config/keys.py``); ``make run``
(``scripts/setup`` and ``daneshyar/devserver.py``) calls
:func:`local_secrets_ensure` before anything imports them. Imports nothing of
Django, so it runs before settings can load.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import secrets
import sys
import tempfile
from pathlib import Path

from daneshyar.config.keys import SECRET_NAMES, secret_file


def new_secret(name: str) -> str:
    """A fresh value for ``name``: 32 random bytes in base64url for the
    Ed25519 signing key, 50 URL-safe random characters (about 300 bits) otherwise."""
    if name == "CERTIFICATE_SIGNING_KEY":
        return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")
    return secrets.token_urlsafe(50)[:50]


def local_secrets_ensure(data_dir: Path) -> dict[str, str]:
    """Every secret's file in ``data_dir``, created when missing; the values.

    A DATA_DIR from before these files existed has only ``secret_key``:
    API keys were then hashed with it and pseudonyms derived from it, so those
    two start from it and the demo key and earlier pseudonyms stay valid.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    earlier = secret_file(data_dir, "SECRET_KEY")
    old_secret = earlier.read_text().strip() if earlier.exists() else None
    inherited = {}
    if old_secret:
        inherited = {
            "API_KEY_HASH_SECRET": old_secret,
            "TRANSCRIPT_PSEUDONYM_KEY": hashlib.sha256(f"pseudonym:{old_secret}".encode()).hexdigest(),
        }
    return {
        name: secret_create_once(secret_file(data_dir, name), inherited.get(name) or new_secret(name))
        for name in SECRET_NAMES
    }


def secret_create_once(path: Path, value: str) -> str:
    """Write ``value`` to ``path`` unless it exists; the value the file holds.

    The value is written to a private temporary file first and then linked
    to ``path``; the link fails when ``path`` exists (like ``O_EXCL``). So two
    processes on an empty DATA_DIR end with one key (the loser reads the
    winner's), and no reader ever sees a half-written file.
    """
    if not path.exists():
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(value)
                handle.flush()
                os.fsync(handle.fileno())
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(temporary)
    return path.read_text().strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m daneshyar.keygen", description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, help="create the files make run reads (once)")
    args = parser.parse_args(argv)
    if args.data_dir is not None:
        local_secrets_ensure(args.data_dir.resolve())
        print(f"==> secrets in {args.data_dir}", file=sys.stderr)
        return 0
    for name in SECRET_NAMES:
        print(f"{name}={new_secret(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
