"""How experiments, figures and reports name the papers they reproduce: author, venue and
year (full references in docs/references.md). ``*_SHORT`` fits a figure title."""

from __future__ import annotations

AMP = "Kheirkhah and Lee, AMP, arXiv 2017"
AMP_SHORT = "Kheirkhah & Lee 2017"
FUSO = "Chen et al., FUSO, USENIX ATC 2016"
FUSO_SHORT = "Chen et al., ATC 2016"
MMPTCP = "Kheirkhah, Wakeman and Parisis, MMPTCP, INFOCOM 2016 (talk slides)"
MMPTCP_SHORT = "Kheirkhah et al., INFOCOM 2016"
MPTCP_DC = "Raiciu et al., SIGCOMM 2011, as surveyed in Soni, Mehta and Sanghavi, IOSR-JCE 2013"
MPTCP_DC_SHORT = "Raiciu et al., SIGCOMM 2011"
RWNDQ = "Abdelmoniem and Bensaou, RWNDQ, arXiv 2021"
RWNDQ_NS2 = "Abdelmoniem and Bensaou, RWNDQ, CloudNet 2015"
RWNDQ_SHORT = "Abdelmoniem & Bensaou 2021"
HPCC = "Li et al., HPCC, SIGCOMM 2019"
HPCC_SHORT = "Li et al., SIGCOMM 2019"
DCQCN = "Zhu et al., DCQCN, SIGCOMM 2015"
DCQCN_SHORT = "Zhu et al., SIGCOMM 2015"
NDP = "Handley et al., NDP, SIGCOMM 2017"
NDP_SHORT = "Handley et al., SIGCOMM 2017"
HOMA = "Montazeri et al., Homa, SIGCOMM 2018"
HOMA_SHORT = "Montazeri et al., SIGCOMM 2018"
