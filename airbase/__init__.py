"""The base layer: what every other package may import (paths, errors, atomic writes,
schema messages, process tags, CPU lists). It imports nothing from loads/, workflows/ or
analysis/, which stack on it in that order (docs/architecture.md; tests/test_architecture.py
checks that no import runs upward)."""
