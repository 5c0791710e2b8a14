"""The TUI's screens: runs list, new study, live progress and one results screen per kind."""
