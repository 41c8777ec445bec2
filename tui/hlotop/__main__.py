import sys

from hlotop.cli import main

sys.exit(main())
