module llm-manifesto/tools/argocd-lua

go 1.26.3

require (
	github.com/argoproj/argo-cd/v3 v3.5.1
	github.com/bmatcuk/doublestar/v4 v4.10.0
	github.com/yuin/gopher-lua v1.1.2
	layeh.com/gopher-json v0.0.0-20190114024228-97fed8db8427
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.3 // indirect
