"""``manifesto plan``'s performance engine (issue 40): ``engine`` estimates a layout with NVIDIA
AIConfigurator's tables (a roofline where they lack the GPU, model or layout), ``plot`` draws the
Pareto frontier. Imported only when plan is asked for performance; this file imports nothing."""
