import sys

from toymodels.cli import main

sys.exit(main())
