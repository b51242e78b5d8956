"""Tests mirror the modules of streamcalls_lab."""
