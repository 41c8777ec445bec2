from hlotop.cli import run

run()
