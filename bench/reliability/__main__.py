from bench.reliability.run import main

raise SystemExit(main())
