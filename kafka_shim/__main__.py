from kafka_shim.shim.cli.main import main

raise SystemExit(main())
