module attributes {spconv.weights = [1, 2]} {
}
