from arignote.cli import main

raise SystemExit(main())
