/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * All of xhcad's layers, for what stands outside them: the unit tests,
 * which drive a layer with those below it. A file of xhcad includes its
 * own layer's header (xhcad_LAYER.h), which declares that layer and the
 * ones below it only, so that a call upward does not compile.
 */
#ifndef XHCAD_H
#define XHCAD_H

#include "xhcad_control.h"

#endif
