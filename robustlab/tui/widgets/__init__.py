"""Reusable TUI widgets: heat-coloured sortable tables and plots drawn from plot specs."""
