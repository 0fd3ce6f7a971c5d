"""`python -m tools.doctables [ROOT]`: rewrite the marked tables and values of ROOT's documents."""

from tools.doctables import main

raise SystemExit(main())
