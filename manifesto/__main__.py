from manifesto.cli import run

run()
