"""The Hugging Face Hub: an export's folder pushed to a dataset repository in one commit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import HfApi, get_token

from exports.options import ExportFailed

REPO_ID_RE = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")


def hub_token() -> str | None:
    """The Hub token huggingface_hub finds (``HF_TOKEN``, else a saved login); never stored or logged."""
    return get_token()


@dataclass(frozen=True)
class HubCommit:
    oid: str
    commit_url: str
    repo_url: str


def hub_push(
    *,
    folder: str | Path,
    repo_id: str,
    private: bool,
    commit_message: str,
    token: str | None = None,
    endpoint: str | None = None,
) -> HubCommit:
    """Create the dataset repo if needed and upload the folder in one commit; returns the commit.

    ``token`` defaults to what huggingface_hub finds (``HF_TOKEN``); ``endpoint`` to its configured
    endpoint (``HF_ENDPOINT``).
    """
    token = token or hub_token()
    if not token:
        raise ExportFailed("no Hugging Face token: set HF_TOKEN")
    api = HfApi(endpoint=endpoint, token=token)
    repo_url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    info = api.upload_folder(
        folder_path=str(folder), repo_id=repo_id, repo_type="dataset", commit_message=commit_message
    )
    return HubCommit(oid=info.oid, commit_url=info.commit_url, repo_url=str(repo_url))
