/*
 * version.h — Lumen's release, one string for every program (-V), the root
 * DSE's vendorVersion, cn=Monitor and the metrics: LUMEN_VERSION comes from
 * the Makefile's VERSION (-DLUMEN_VERSION), never from a source file, so
 * the programs and the package cannot disagree.
 *
 * Caveats: a build that compiles Lumen's sources without the Makefile must
 * pass -DLUMEN_VERSION='"X.Y.Z"' itself (the build fails otherwise).
 */
#ifndef LUMEN_VERSION_H
#define LUMEN_VERSION_H

#ifndef LUMEN_VERSION
#error "LUMEN_VERSION is defined by the Makefile's VERSION (-DLUMEN_VERSION)"
#endif

#endif
