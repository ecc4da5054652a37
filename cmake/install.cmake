# Installation and packaging (issue 14).
