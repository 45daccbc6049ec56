from ghstate.cli import main

main()
