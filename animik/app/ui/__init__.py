"""The imgui panels: each ``draw_<name>_panel(state)`` draws one window."""
