"""The parts of bench/soak.py (issue 48), the soak of `ridge serve`; run the script, not this package:
  common.py    the mix of request kinds, outcome classes and small helpers every part uses
  server.py    starting and stopping the server, and sampling it (RSS, fds, threads, CPU, sockets, /metrics)
  client.py    the HTTP plumbing: plain and streamed requests, raw sockets, errors and transport failures
  kinds.py     the request kinds (chat, completions, n > 1, structured, tools, too long, cancel, vanish, ...)
  workload.py  the client workers, the bursts, the drained checkpoints and the run loop
  report.py    statistics, targets, soak.json, requests.jsonl and the text summary
  svg.py       the plot (soak.svg), written by hand
"""
