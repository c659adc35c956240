"""Where the lab's pieces live. Everything is found from the repository root, so the lab
runs from any working directory; AIRLAB_ROOT overrides it (e.g. a copy on a cluster node)."""
import os
from pathlib import Path

ROOT = Path(os.environ.get("AIRLAB_ROOT", Path(__file__).resolve().parents[1]))
ENGINE_BUILD = ROOT / "engine" / "build"
AIRPDES = ENGINE_BUILD / "airpdes"
AIRLOAD = ENGINE_BUILD / "airload"
CONFIGS = ROOT / "configs"
PROFILES = CONFIGS / "profiles"
SETUPS = CONFIGS / "setups"
EXPERIMENTS = CONFIGS / "experiments"
SCHEMAS = CONFIGS / "schemas"
RESULTS = Path(os.environ.get("AIRLAB_RESULTS", ROOT / "results"))
