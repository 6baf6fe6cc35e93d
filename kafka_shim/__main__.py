from kafka_shim.shim.cli import main

raise SystemExit(main())
