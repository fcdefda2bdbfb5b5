from zhiwen.cli.main import main

main()
