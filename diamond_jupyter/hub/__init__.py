"""A real JupyterHub for this project's users and tests (`scripts/hub.sh`)."""
