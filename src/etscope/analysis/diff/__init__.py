"""What changed: two profiles compared axis by axis (latency, placement, program, environment) and trends over builds."""
