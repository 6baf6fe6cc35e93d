"""The broker's HTTP side: the guard every surface goes through, the server, the console,
/metrics and the views they read."""
