"""Python helpers for spconv artifacts (standard library only)."""
