"""`python -m tools.doctables [--check] [ROOT]`: rewrite (or check) the marked tables and values of ROOT's documents."""

from tools.doctables import main

raise SystemExit(main())
