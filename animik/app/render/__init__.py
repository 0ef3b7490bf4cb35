"""moderngl rendering of the app: the 3-D view, Dear ImGui draw data, shaders, PNG output."""
